// The named dispatch under STAGECRAFT_INSTANTIATE (registry.hpp): this file is compiled with
// STAGECRAFT_INSTANTIATE="K=2, S=3" (tests/CMakeLists.txt), as a kernel runner's INSTANTIATE
// compiles its kernel files. Only the named values are built; a listed value that was not built
// is a usage error that says why, and a parameter the macro does not name keeps every value.
#include <catch2/catch.hpp>

#include <set>

#include <stagecraft/registry.hpp>

using namespace stagecraft;

namespace {
std::set<long long>& built() {  // the values whose f was instantiated (each registers itself at start-up)
  static std::set<long long> values;
  return values;
}
template <long long V>
struct mark {
  static inline const bool done = built().insert(V).second;
};
}  // namespace

TEST_CASE("a named dispatch builds only the values STAGECRAFT_INSTANTIATE names", "[unit][registry]") {
  auto f = [](auto v) {
    (void)mark<decltype(v)::value>::done;
    return decltype(v)::value * 10;
  };
  CHECK(dispatch<"K", 1, 2, 3>(param_values{{"K", 2}}, f) == 20);
  CHECK(built() == std::set<long long>{2});  // 1 and 3 were never instantiated
  try {
    dispatch<"K", 1, 2, 3>(param_values{{"K", 3}}, f);
    FAIL("K=3 was not built and must be refused");
  } catch (usage_error const& e) {
    CHECK_THAT(e.what(), Catch::Contains("K=3: this build instantiates only the values STAGECRAFT_INSTANTIATE names"));
  }
  CHECK_THROWS_WITH((dispatch<"K", 1, 2, 3>(param_values{{"K", 7}}, f)),
                    Catch::Contains("value 7 is not one of the values this kernel was instantiated for"));
  // S names 3; N is not named: every value of N is built.
  CHECK(dispatch<"S", 2, 3>(param_values{{"S", 3}}, [](auto v) { return decltype(v)::value; }) == 3);
  CHECK(dispatch<"N", 4, 5, 6>(param_values{{"N", 6}}, [](auto v) { return decltype(v)::value; }) == 6);
  CHECK(dispatch<"N", 4, 5, 6>(param_values{{"N", 4}}, [](auto v) { return decltype(v)::value; }) == 4);
}
