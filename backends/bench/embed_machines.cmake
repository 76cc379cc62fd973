# data/machines.json -> a C++ string (a raw literal; the delimiter cannot occur in JSON).
file(READ ${IN} text)
file(WRITE ${OUT} "// Generated from data/machines.json: the model's built-in machines.\nnamespace stagecraft::bench {\nextern const char* const builtin_machines_json;\nconst char* const builtin_machines_json = R\"sc_machines(${text})sc_machines\";\n}\n")
