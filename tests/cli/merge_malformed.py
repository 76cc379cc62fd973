#!/usr/bin/env python3
"""`stagecraft merge` on damaged shard files: every case must exit 64 with one line on stderr that
names the file and the line and says what is wrong, never a crash (a header with an empty config
was SIGSEGV) or exit 70 (a field of the wrong type was "internal error: please report a bug").

The shards are written by the CLI itself (run --explore and bench --sweep, two shards each), so
the cases damage what the writers really write; the undamaged files must merge (exit 0) first.
  merge_malformed.py STAGECRAFT WORKDIR
"""
import copy
import json
import os
import shutil
import subprocess
import sys

cli, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)


def stagecraft(*args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


def write(path, lines):
    with open(path, "w") as f:
        f.writelines((x if isinstance(x, str) else json.dumps(x, separators=(",", ":"))) + "\n" for x in lines)


# add_one explores 4 schedules: shard 0/2 runs seeds 0 and 2, shard 1/2 seeds 1 and 3, the last
# (its record has "last"). The sweep K=1..3 has points 0 and 2 in shard 0/2, point 1 in 1/2.
for i in range(2):
    for args in (["run", "add_one", "--explore", "4", "--shard", f"{i}/2", "--results", f"r{i}.jsonl"],
                 ["bench", "add_one", "--sweep", "K=1..3", "--shard", f"{i}/2", "--results", f"b{i}.jsonl"]):
        p = stagecraft(*args)
        if p.returncode != 0:
            sys.exit(f"writing the shards: stagecraft {' '.join(args)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
base = {}
for name in ("r0", "r1", "b0", "b1"):
    with open(f"{name}.jsonl") as f:
        base[name] = [json.loads(x) for x in f if x.strip()]
for pair in (("r0", "r1"), ("b0", "b1")):
    p = stagecraft("merge", *(f"{n}.jsonl" for n in pair), "-o", f"{pair[0]}_merged.jsonl")
    if p.returncode != 0:
        sys.exit(f"the undamaged shards {pair} do not merge: exit {p.returncode}\n{p.stderr}")


def damaged(name, change):
    """A copy of shard `name`'s lines, changed in place by `change(lines)`."""
    lines = copy.deepcopy(base[name])
    change(lines)
    return lines


def setter(line, path, value):
    """Sets lines[line][path...] = value (the last key deleted when value is DELETE)."""
    def change(lines):
        obj = lines[line]
        for key in path[:-1]:
            obj = obj[key]
        if value is DELETE:
            del obj[path[-1]]
        else:
            obj[path[-1]] = value
    return change


DELETE = object()
U64_MAX = 2**64 - 1

# (case, the shard damaged, its change, the other files merged with it, the line named, the words)
cases = [
    # the header
    ("header_empty_config", "r0", lambda l: l.__setitem__(0, {"record": "shard", "command": "run", "shard": 0, "of": 1, "config": {}}), [], 1,
     'config has no "policy"'),
    ("header_not_object", "r0", lambda l: l.__setitem__(0, [1, 2]), [], 1, "a JSON array, not a record"),
    ("header_not_first", "r0", lambda l: l.reverse(), [], 1, "does not start with a shard header"),
    ("header_missing_of", "r0", setter(0, ["of"], DELETE), [], 1, 'the record has no "of"'),
    ("header_of_string", "r0", setter(0, ["of"], "2"), [], 1, 'of must be an integer from 1 to 2147483647, got "2" (a string)'),
    ("header_of_zero", "r0", setter(0, ["of"], 0), [], 1, "of must be an integer from 1 to 2147483647, got 0"),
    ("header_shard_out_of_range", "r0", setter(0, ["shard"], 2), ["r1.jsonl"], 1, "shard must be an integer from 0 to 1, got 2"),
    ("header_shard_negative", "r0", setter(0, ["shard"], -1), ["r1.jsonl"], 1, "shard must be an integer from 0 to 1, got -1"),
    ("header_shard_float", "r0", setter(0, ["shard"], 0.0), ["r1.jsonl"], 1, "shard must be an integer from 0 to 1, got 0.0"),
    ("header_command_unknown", "r0", setter(0, ["command"], "explore"), [], 1, 'command must be one of "run", "bench", got "explore"'),
    ("header_unknown_field", "r0", setter(0, ["seed"], 3), [], 1, 'the record has a field "seed" that no shard writer writes'),
    ("header_config_array", "r0", setter(0, ["config"], []), [], 1, "config must be an object, got []"),
    # a run's configuration
    ("config_policy_unknown", "r0", setter(0, ["config", "policy"], "sometimes"), [], 1, 'config.policy must be one of "eager", "lazy", "random", "pct"'),
    ("config_pct_depth_zero", "r0", setter(0, ["config", "pct_depth"], 0), [], 1, "config.pct_depth must be an integer from 1 to"),
    ("config_checks_string", "r0", setter(0, ["config", "checks"], "yes"), [], 1, 'config.checks must be true or false, got "yes"'),
    ("config_first_seed_string", "r0", setter(0, ["config", "first_seed"], "0"), [], 1, 'config.first_seed must be an integer from 0 to 18446744073709551615, got "0"'),
    ("config_first_seed_negative", "r0", setter(0, ["config", "first_seed"], -1), [], 1, "config.first_seed must be an integer from 0 to 18446744073709551615, got -1"),
    ("config_seeds_overflow", "r0", setter(0, ["config", "first_seed"], U64_MAX), [], 1, "the seeds run past 18446744073709551615"),
    ("config_schedules_zero", "r0", setter(0, ["config", "schedules"], 0), [], 1, "config.schedules must be an integer from 1 to 2147483647, got 0"),
    ("config_schedules_float", "r0", setter(0, ["config", "schedules"], 4.0), [], 1, "config.schedules must be an integer from 1 to 2147483647, got 4.0"),
    ("config_input_seed_missing", "r0", setter(0, ["config", "input_seed"], DELETE), [], 1, 'config has no "input_seed"'),
    ("config_kernels_object", "r0", setter(0, ["config", "kernels"], {}), [], 1, "config.kernels must be an array, got {}"),
    ("config_kernel_name_number", "r0", setter(0, ["config", "kernels", 0, "kernel"], 7), [], 1, "config.kernels[0].kernel must be a string, got 7"),
    ("config_param_string", "r0", setter(0, ["config", "kernels", 0, "params", "K"], "4"), [], 1,
     'config.kernels[0].params.K must be an integer from -9223372036854775808 to 9223372036854775807, got "4"'),
    ("config_params_nested_wrong", "r0", lambda l: l[0]["config"]["kernels"][0].update({"K": 4}), [], 1,
     'config.kernels[0] has a field "K" that no shard writer writes'),
    # a million levels of nesting: parsed, rejected and shown without recursing once per level
    ("config_kernels_deep", "r0",
     lambda l: l.__setitem__(0, json.dumps(l[0], separators=(",", ":")).replace('"kernels":[', '"kernels":[' + "[" * 10**6 + "]" * 10**6 + ",", 1)),
     [], 1, "config.kernels[0] must be an object, got [[[...]]] (an array)"),
    ("config_kernel_twice", "r0", lambda l: l[0]["config"]["kernels"].append(l[0]["config"]["kernels"][0]), [], 1,
     "config.kernels[1] repeats config.kernels[0], kernel 'add_one'"),
    # a run's records
    ("record_not_json", "r0", lambda l: l.append("{oops"), [], 3, "not JSON"),
    ("record_no_kind", "r0", setter(1, ["record"], DELETE), [], 2, 'the record has no "record"'),
    ("record_kind_number", "r0", setter(1, ["record"], 1), [], 2, "record must be a string, got 1"),
    ("record_wrong_kind", "r0", setter(1, ["record"], "point"), [], 2, 'must be "explore" in a shard of `run`, got "point"'),
    ("record_second_header", "r0", lambda l: l.append(l[0]), [], 3, "a second shard header (the first is line 1)"),
    ("record_twice", "r0", lambda l: l.append(l[1]), [], 3, "a second record for kernel 'add_one' (K=4 M=512 N=1024 splits=2) (the first is line 2)"),
    ("record_missing", "r1", lambda l: l.pop(), ["r0.jsonl"], 1, "shard 1/2 has schedules of kernel 'add_one'"),
    ("record_unknown_kernel", "r0", setter(1, ["kernel"], "nope"), [], 2, "kernel 'nope' (K=4 M=512 N=1024 splits=2) is not among the header's config.kernels"),
    ("record_other_params", "r0", setter(1, ["params", "K"], 2), [], 2, "is not among the header's config.kernels"),
    ("record_unknown_field", "r0", setter(1, ["seed"], 0), [], 2, 'the record has a field "seed" that no shard writer writes'),
    ("record_ran_string", "r0", setter(1, ["ran"], "2"), [], 2, 'ran must be an integer from 1 to 4, got "2"'),
    ("record_ran_too_many", "r0", setter(1, ["ran"], 5), [], 2, "ran must be an integer from 1 to 4, got 5"),
    ("record_failing_seed_negative", "r0", lambda l: l[1].update(failing_seed=-2, diagnostic={"check": "deadlock", "message": "m"}), [], 2,
     "failing_seed must be an integer from 0 to 18446744073709551615, got -2"),
    ("record_failing_seed_outside", "r0", lambda l: l[1].update(failing_seed=8, diagnostic={"check": "deadlock", "message": "m"}), [], 2,
     "failing_seed 8 is outside the run's seeds 0..3"),
    ("record_failing_seed_other_shard", "r0", lambda l: l[1].update(failing_seed=1, diagnostic={"check": "deadlock", "message": "m"}), ["r1.jsonl"], 2,
     "failing_seed 1 of kernel 'add_one' (K=4 M=512 N=1024 splits=2) belongs to shard 1/2, not to this shard 0/2"),
    ("record_failing_seed_no_diagnostic", "r0", setter(1, ["failing_seed"], 2), [], 2, '"failing_seed" is set but "diagnostic" is null'),
    ("record_diagnostic_no_failing_seed", "r0", setter(1, ["diagnostic"], {"check": "deadlock", "message": "m"}), [], 2,
     '"diagnostic" is set but "failing_seed" is null'),
    ("record_diagnostic_flattened", "r0", lambda l: l[1].update(failing_seed=2, diagnostic={"check": "deadlock"}, message="m"), [], 2,
     'the record has a field "message" that no shard writer writes'),
    ("record_diagnostic_no_message", "r0", lambda l: l[1].update(failing_seed=2, diagnostic={"check": "deadlock"}), [], 2, 'diagnostic has no "message"'),
    ("record_diagnostic_string", "r0", lambda l: l[1].update(failing_seed=2, diagnostic="deadlock"), [], 2, 'diagnostic must be an object, got "deadlock"'),
    ("record_last_dropped", "r1", setter(1, ["last"], None), ["r0.jsonl"], 2, '"last" is null, but this shard ran the last schedule (seed 3)'),
    ("record_last_not_last", "r1", setter(1, ["last", "seed"], 1), ["r0.jsonl"], 2, "last.seed 1 is not the run's last seed 3"),
    ("record_last_other_shard", "r0", setter(1, ["last"], {"seed": 3, "verdict": "correct", "detail": "d"}), ["r1.jsonl"], 2,
     "last.seed 3 of kernel 'add_one' (K=4 M=512 N=1024 splits=2) belongs to shard 1/2, not to this shard 0/2"),
    ("record_last_verdict_unknown", "r1", setter(1, ["last", "verdict"], "fine"), ["r0.jsonl"], 2, 'last.verdict must be one of "correct", "wrong result", got "fine"'),
    ("record_last_detail_missing", "r1", setter(1, ["last", "detail"], DELETE), ["r0.jsonl"], 2, 'last has no "detail"'),
    ("record_failure_and_last", "r1", lambda l: l[1].update(failing_seed=1, diagnostic={"check": "deadlock", "message": "m"}), ["r0.jsonl"], 2,
     'a record with a failing seed has no "last"'),
    # a bench sweep's configuration and points
    ("bench_backend_unknown", "b0", setter(0, ["config", "backend"], "host"), ["b1.jsonl"], 1, 'config.backend must be one of "gpu", "model", got "host"'),
    ("bench_points_wrong", "b0", setter(0, ["config", "points"], 4), ["b1.jsonl"], 1, "config.points is 4, but the sweep has 3 points"),
    ("bench_sweep_empty", "b0", setter(0, ["config", "sweep", 0, "values"], []), ["b1.jsonl"], 1, "config.sweep[0].values is empty"),
    ("bench_sweep_value_string", "b0", setter(0, ["config", "sweep", 0, "values", 1], "2"), ["b1.jsonl"], 1, 'config.sweep[0].values[1] must be an integer'),
    ("bench_set_not_object", "b0", setter(0, ["config", "set"], [1]), ["b1.jsonl"], 1, "config.set must be an object, got [1]"),
    ("bench_flush_missing", "b0", setter(0, ["config", "flush_l2"], DELETE), ["b1.jsonl"], 1, 'config has no "flush_l2"'),
    ("bench_point_index_outside", "b0", setter(1, ["index"], 7), ["b1.jsonl"], 2, "index must be an integer from 0 to 2, got 7"),
    ("bench_point_index_string", "b0", setter(1, ["index"], "0"), ["b1.jsonl"], 2, 'index must be an integer from 0 to 2, got "0"'),
    ("bench_point_other_shard", "b1", setter(1, ["index"], 0), ["b0.jsonl"], 2, "point 0 belongs to shard 0/2, not to this shard 1/2"),
    ("bench_point_twice", "b0", lambda l: l.append(l[1]), ["b1.jsonl"], 4, "point 0 again (the first is line 2)"),
    ("bench_point_missing", "b0", lambda l: l.pop(), ["b1.jsonl"], 1, "shard 0/2 has point 2 of the sweep but no record of it"),
    ("bench_point_field_missing", "b0", setter(1, ["median_ms"], DELETE), ["b1.jsonl"], 2, 'the record has no "median_ms"'),
    ("bench_point_reps_float", "b0", setter(1, ["reps"], 1.5), ["b1.jsonl"], 2, "reps must be an integer from -2147483648 to 2147483647, got 1.5"),
    ("bench_point_gbps_string", "b0", setter(1, ["gbps"], "fast"), ["b1.jsonl"], 2, 'gbps must be a number, got "fast"'),
    ("bench_point_wait_not_array", "b0", setter(1, ["wait_fraction"], 0.5), ["b1.jsonl"], 2, "wait_fraction must be an array, got 0.5"),
    ("bench_point_wait_element", "b0", setter(1, ["wait_fraction"], ["x"]), ["b1.jsonl"], 2, 'wait_fraction[0] must be a number, got "x"'),
    ("bench_point_param_float", "b0", setter(1, ["params", "K"], 1.5), ["b1.jsonl"], 2, "params.K must be an integer"),
    ("bench_point_wrong_kind", "b0", setter(1, ["record"], "explore"), ["b1.jsonl"], 2, 'must be "point" in a shard of `bench`, got "explore"'),
    ("bench_error_point_with_times", "b0", lambda l: l[1].update(error="too big"), ["b1.jsonl"], 2, 'the record has a field "median_ms" that no shard writer writes'),
]

# Damage that only shows between files: always reported at the header of the second file given.
across = [
    ("across_other_config", ["r0.jsonl", "x.jsonl"], ("r1", setter(0, ["config", "checks"], False)), 1,
     "config.checks is false, but true in 'r0.jsonl': the shards of one merge come from one run"),
    ("across_other_kernel_params", ["r0.jsonl", "x.jsonl"],
     ("r1", lambda l: [o["params"].update(M=256) for o in (l[0]["config"]["kernels"][0], l[1])]), 1, "config.kernels[0].params.M is 256, but 512 in 'r0.jsonl'"),
    ("across_same_shard_twice", ["r0.jsonl", "x.jsonl"], ("r0", lambda l: None), 1, "shard 0/2 is given twice ('r0.jsonl' and 'x.jsonl')"),
    ("across_run_and_bench", ["r0.jsonl", "x.jsonl"], ("b1", lambda l: None), 1, "a shard of `bench`, but 'r0.jsonl' is one of `run`"),
    ("across_other_count", ["b0.jsonl", "x.jsonl"], ("b0", lambda l: l[0].update(of=1, shard=0) or l.insert(2, {**base["b1"][1]})), 1,
     "shard 0/1, but 'b0.jsonl' is one of 2 shards"),
]

failures = []


def check(name, files, damaged_file, line, words):
    p = stagecraft("merge", *files)
    err = p.stderr.strip()
    prefix = f"stagecraft: merge: '{damaged_file}' line {line}: "
    if p.returncode != 64:
        failures.append(f"{name}: exit {p.returncode}, expected 64\n    stderr: {err}")
    elif "\n" in err or not err.startswith(prefix) or words not in err:
        failures.append(f"{name}: expected one line starting {prefix!r} and saying {words!r}\n    stderr: {err}")


for name, shard, change, others, line, words in cases:
    path = f"{name}.jsonl"
    write(path, damaged(shard, change))
    check(name, [path, *others], path, line, words)
for name, files, (shard, change), line, words in across:
    write("x.jsonl", damaged(shard, change))
    check(name, files, "x.jsonl", line, words)

total = len(cases) + len(across)
if failures:
    print("\n".join(failures))
    sys.exit(f"{len(failures)} of {total} damaged shard files not rejected as they should be")
print(f"{total} damaged shard files: each exit 64 with its file, line and fault")
