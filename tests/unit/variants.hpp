// The parameter values of a registered kernel that the "every value" tests build: the defaults,
// then each allowed value of each parameter. A value the kernel offers only beside another
// parameter's non-default value (attention_hopper's fp8=1 needs BK=128) is refused with the
// defaults by a usage error naming it; it is then taken with the first other parameter's value
// that builds, so every allowed value is built in some combination, and one no combination
// builds is an error.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include <stagecraft/registry.hpp>

namespace stagecraft::testing {

inline std::vector<param_values> every_allowed_value(kernel_entry const& e) {
  std::vector<param_values> out{registry::resolve(e, {})};
  for (auto const& p : e.params)
    for (auto v : p.allowed) {
      auto vals = registry::resolve(e, {{p.name, v}});
      try {
        (void)e.build(vals);
      } catch (usage_error const& refused) {
        const std::string why = refused.what();
        if (why.find(p.name + "=" + std::to_string(v)) == std::string::npos)
          throw std::runtime_error(e.name + ": " + p.name + "=" + std::to_string(v) + " refused without naming it: " + why);
        bool found = false;
        for (auto const& q : e.params)
          for (auto w : q.allowed) {
            if (found || q.name == p.name) continue;
            try {
              auto with = registry::resolve(e, {{p.name, v}, {q.name, w}});
              (void)e.build(with);
              vals = with, found = true;
            } catch (usage_error const&) {
            }
          }
        if (!found) throw std::runtime_error(e.name + ": " + p.name + "=" + std::to_string(v) + " builds with no other parameter's value: " + why);
      }
      out.push_back(vals);
    }
  return out;
}

}  // namespace stagecraft::testing
