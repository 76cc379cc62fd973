#pragma once
#include <string>

namespace stagecraft::test {
// Ends nothing by itself (return after it): records that this run could not test what it is
// for, so the executable exits with STAGECRAFT_SKIP_RETURN_CODE unless something failed.
void skip(std::string const& reason);
}  // namespace stagecraft::test
