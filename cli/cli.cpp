#include "stagecraft/cli.hpp"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <range/v3/algorithm/max_element.hpp>
#include <range/v3/view/transform.hpp>

namespace stagecraft::cli {
namespace {

param_values parse_sets(std::vector<std::string> const& sets) {
  param_values v;
  for (auto const& s : sets) {
    auto [name, value] = registry::parse_assignment(s);
    v[name] = value;
  }
  return v;
}

std::string describe_params(kernel_entry const& e) {
  auto one = [](param_spec const& p) {
    std::string range = p.allowed.empty() ? fmt::format("{}..{}", p.min, p.max) : fmt::format("{{{}}}", fmt::join(p.allowed, ","));
    if (p.multiple_of > 1) range += fmt::format(", multiple of {}", p.multiple_of);
    return fmt::format("{}={} ({}; {})", p.name, p.default_value, p.help, range);
  };
  return fmt::format("{}", fmt::join(e.params | ranges::views::transform(one), "\n      "));
}

void list(registry const& kernels) {
  auto const entries = kernels.all();
  std::size_t width = 0;
  for (auto const* e : entries) width = std::max(width, e->name.size());
  for (auto const* e : entries) {
    fmt::print("{:<{}}  {}\n", e->name, width, e->summary);
    if (!e->params.empty()) fmt::print("      {}\n", describe_params(*e));
  }
}

void show(kernel_entry const& e, param_values const& overrides) {
  const auto values = registry::resolve(e, overrides);
  const ir::Kernel k = e.build(values);
  std::vector<std::string> set;
  for (auto const& [n, v] : values) set.push_back(fmt::format("{}={}", n, v));
  fmt::print("# {} ({})\n# hash {:016x}\n{}\n", e.name, fmt::join(set, " "), ir::hash(k), ir::print(k));
}

}  // namespace

int main(int argc, char** argv, registry const& kernels) {
  CLI::App app{"stagecraft: pipelined GPU kernels as typed C++ expression trees"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");

  auto* list_cmd = app.add_subcommand("list", "list the registered kernels and their parameters");

  auto* show_cmd = app.add_subcommand("show", "print a kernel's lowered IR");
  std::string kernel_name;
  std::vector<std::string> sets;
  bool show_all = false;
  show_cmd->add_option("kernel", kernel_name, "kernel name (see `stagecraft list`)");
  show_cmd->add_option("--set", sets, "override a parameter: --set K=3 (repeatable)");
  show_cmd->add_flag("--all", show_all, "show every registered kernel with its default parameters");

  try {
    app.parse(argc, argv);
  } catch (CLI::CallForHelp const& e) {
    return app.exit(e);
  } catch (CLI::CallForAllHelp const& e) {
    return app.exit(e);
  } catch (CLI::ParseError const& e) {
    std::cerr << "stagecraft: " << e.what() << " (see --help)\n";
    return exit_usage;
  }

  try {
    if (*list_cmd) {
      list(kernels);
    } else if (*show_cmd) {
      if (show_all) {
        if (!kernel_name.empty() || !sets.empty()) throw usage_error("show --all takes no kernel name and no --set");
        for (auto const* e : kernels.all()) show(*e, {});
      } else {
        if (kernel_name.empty()) throw usage_error("show: name a kernel (see `stagecraft list`) or pass --all");
        show(kernels.find(kernel_name), parse_sets(sets));
      }
    }
    return exit_ok;
  } catch (usage_error const& e) {
    std::cerr << "stagecraft: " << e.what() << "\n";
    return exit_usage;
  } catch (ir::VerifyError const& e) {
    std::cerr << "stagecraft: internal error, the kernel does not verify: " << e.what() << "\n";
    return exit_internal;
  }
}

}  // namespace stagecraft::cli
