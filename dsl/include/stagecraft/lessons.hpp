// Numbered lessons on barrier semantics (examples/lessons/, docs/lessons/): a correct kernel and
// buggy twins, each twin one mistake, with the diagnostic it must get and what a GPU would do.
// Kept apart from the kernel registry, so `stagecraft run --all` never runs a buggy twin.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "stagecraft/host/tensor.hpp"
#include "stagecraft/ir/kernel.hpp"
#include "stagecraft/registry.hpp"

namespace stagecraft {

struct lesson_twin {
  std::string name;      // "no_wait": `stagecraft lesson 01 --buggy=no_wait`
  std::string mistake;   // the one change against the correct kernel, in one line
  std::string expect;    // the interpreter's check it must trip ("deadlock", "data-race", ...)
  std::string policy = "eager";  // the schedule that shows it (eager, lazy, or pct)
  std::string hardware;  // what a GPU would do with it, in plain words
  std::string fix;       // the fix, in one line
  std::function<ir::Kernel()> build;
};

// Another correct way to write a lesson's kernel, slower for a reason the lesson teaches
// (lesson 13): `stagecraft lesson NN` prints what each costs beside the lesson's own kernel.
struct lesson_variant {
  std::string name;    // "one_stage"
  std::string change;  // what differs from the lesson's kernel, in one line
  std::function<ir::Kernel()> build;
};

struct lesson_entry {
  int number = 0;
  std::string slug;      // "one_barrier" (examples/lessons/01_one_barrier/)
  std::string title;
  std::string summary;   // what it teaches, in one or two sentences
  std::function<ir::Kernel()> build;                          // the correct kernel
  std::function<void(std::vector<host_tensor>&)> reference;  // as kernel_entry::reference
  std::vector<lesson_twin> twins;
  std::vector<lesson_variant> variants;
};

class lesson_registry {
 public:
  static lesson_registry& global();
  bool add(lesson_entry e);                       // returns true so it can initialise a static
  lesson_entry const& find(std::string const& number) const;  // "1", "01" or the slug; throws usage_error
  std::vector<lesson_entry const*> all() const;  // by number
  // Lessons announced but not written yet (their ops have not landed): number -> title. None now.
  static std::map<int, std::string> const& coming();

 private:
  std::map<int, lesson_entry> entries_;
};

}  // namespace stagecraft

// At namespace scope in a lesson's translation unit: STAGECRAFT_LESSON(lesson_entry{...});
#define STAGECRAFT_LESSON(...) \
  [[maybe_unused]] static const bool STAGECRAFT_CONCAT(stagecraft_lesson_, __LINE__) = ::stagecraft::lesson_registry::global().add(__VA_ARGS__)
