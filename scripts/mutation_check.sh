#!/usr/bin/env bash
# Mutation check: do the tests notice a wrong number?
#
# Plants one-line bugs, one at a time, in a scratch copy of the working tree (tracked files and
# untracked ones git does not ignore, so uncommitted work is checked too), rebuilds what the
# bug touches and runs the tests that should catch it. Prints a table: KILLED (and by which
# tests), SURVIVED, or NO-BUILD (a mutant that does not compile tells nothing). Exit status 1 if
# any mutant survived. Not part of CI: every mutant is a rebuild and a test run (about 20 minutes
# for the whole list on two idle cores, twice that on busy ones).
#
#   scripts/mutation_check.sh            # every mutant
#   scripts/mutation_check.sh --list     # the list, nothing run
#   scripts/mutation_check.sh --check    # every mutant still applies (FROM once in FILE), nothing built;
#                                        # a CTest test (mutation.check), so a mutant that rots fails CI
#   scripts/mutation_check.sh REGEX      # the mutants whose name matches REGEX
#
# Environment: STAGECRAFT_MUTATION_DIR (scratch directory, default a fresh mktemp -d under /tmp,
# kept for a rerun; the build in it is reused), STAGECRAFT_MUTATION_TIMEOUT (seconds per test
# command, default 600: a mutant that hangs the tests counts as killed).
set -euo pipefail
# Bash reads a script while it runs it, and a run takes long enough for someone to edit this one:
# run from a private copy.
# (--list and --check are over in a moment and read the tree they are in: no copy.)
if [[ "${1:-}" == --list || "${1:-}" == --check ]]; then
  STAGECRAFT_MUTATION_TREE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
elif [[ -z "${STAGECRAFT_MUTATION_TREE:-}" ]]; then
  STAGECRAFT_MUTATION_TREE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  export STAGECRAFT_MUTATION_TREE
  copy=$(mktemp /tmp/mutation_check.XXXXXX)
  cp "${BASH_SOURCE[0]}" "$copy"
  exec bash "$copy" "$@"
fi
here=$STAGECRAFT_MUTATION_TREE

# ---- the mutants ------------------------------------------------------------------------------
# mutant NAME FILE FROM TO SUITE: replace the one occurrence of FROM in FILE by TO. FROM must occur
# exactly once (the script stops otherwise, so the list cannot silently go stale). SUITE says what
# to rebuild and run: codegen, interp, verifier or frontend:REGEX (compile-fail cases matching REGEX).
names=() files=() froms=() tos=() suites=()
mutant() { names+=("$1"); files+=("$2"); froms+=("$3"); tos+=("$4"); suites+=("$5"); }

cg=backends/nvrtc/src/codegen.cpp
wg=backends/nvrtc/src/wgmma.cpp  # the code generator's wgmma engine and register fragments
pre=backends/nvrtc/src/prelude.hpp
swz=dsl/include/stagecraft/ir/swizzle.hpp  # the swizzle the prelude, the interpreter and wgmma's addressing share
mc=backends/interp/src/machine.cpp
ms=backends/interp/src/scheduler.cpp
mb=backends/interp/src/mbarrier.cpp
mt=backends/interp/src/engines/tma.cpp
kh=dsl/include/stagecraft/kernel.hpp
cp_=dsl/include/stagecraft/ops/copy.hpp
vf=dsl/src/ir/verify.cpp

# The planted bugs of issue 16: each passed every test when the issue was filed.
mutant expect_tx_plus_16   $cg 'sc::mbar_arrive_expect_tx(bar, {}u);", bytes' 'sc::mbar_arrive_expect_tx(bar, {}u);", bytes + 16' codegen
mutant expect_tx_minus_16  $cg 'sc::mbar_arrive_expect_tx(bar, {}u);", bytes' 'sc::mbar_arrive_expect_tx(bar, {}u);", bytes - 16' codegen
mutant bulk_wait_n_plus_1  $cg 's.flag ? "_read" : "", s.n, id' 's.flag ? "_read" : "", s.n + 1, id' codegen
mutant swizzle_bits        $swz 'if constexpr (Bytes == 128) return o ^ (((o >> 7) & 7u) << 4);' 'if constexpr (Bytes == 128) return o ^ (((o >> 6) & 7u) << 4);' codegen
mutant multicast_mask      $cg 'if (origin) pattern |= 1u << r;' 'if (origin) pattern |= 1u << (r + 1);' codegen
mutant parity_never_flips  $cg 'line(fmt::format("  {} ^= 1u << (e % 32);", word));' 'line(fmt::format("  {} ^= 0u << (e % 32);", word));' codegen
mutant pct_no_change_points $ms 'if (!change_points_.empty() && time_ >= change_points_.back()) {' 'if (false && !change_points_.empty() && time_ >= change_points_.back()) {' interp
mutant seed_ignored        $mc 'prog_(detail::flatten(k)), rng_{o.seed} {' 'prog_(detail::flatten(k)), rng_{0} {' interp
mutant explore_same_seed   $mc 'o.seed = base.seed + static_cast<std::uint64_t>(i);' 'o.seed = base.seed;' interp
mutant smem_budget_plus_1k $kh '} else if constexpr (smem > ir::max_smem_bytes) {' '} else if constexpr (smem > ir::max_smem_bytes + 1024) {' 'frontend:smem_budget'

# More of the same kind: numbers in the generated code...
mutant bulk_wait_read_inverted $cg 's.flag ? "_read" : "", s.n, id' 's.flag ? "" : "_read", s.n, id' codegen
mutant fence_dropped       $cg 'line(fmt::format("sc::fence_proxy_async{}();  // op #{}", gmem_cross_proxy() ? "_all" : "", id));' 'line(fmt::format("// sc::fence_proxy_async{}() dropped  // op #{}", gmem_cross_proxy() ? "_all" : "", id));' codegen
mutant parity_wrong_bit    $cg 'line(fmt::format("  {} ^= 1u << (e % 32);", word));' 'line(fmt::format("  {} ^= 1u << ((e + 1) % 32);", word));' codegen
mutant multicast_share_bytes $cg 'const auto share_bytes = bytes / n;' 'const auto share_bytes = bytes / n / 2;' codegen
mutant multicast_pos_stride $cg 'if (collective(d)) pos_step *= cl[d];' 'if (collective(d)) pos_step *= cl[d] + 1;' codegen
mutant swizzle_64_bits     $swz 'else if constexpr (Bytes == 64) return o ^ (((o >> 7) & 3u) << 4);' 'else if constexpr (Bytes == 64) return o ^ (((o >> 7) & 7u) << 4);' codegen
mutant parity_starts_at_one $cg 'unsigned parity[{}] = {{}};' 'unsigned parity[{}] = {{~0u}};' codegen
mutant barrier_address_skew $cg 'return fmt::format("(smem_base + {}u + 8u * static_cast<unsigned>({} - {}))", offsets_[r.id], bar_index(rid), bar_first_[r.id]);' 'return fmt::format("(smem_base + {}u + 8u * static_cast<unsigned>({} - {}))", offsets_[r.id] + 8, bar_index(rid), bar_first_[r.id]);' codegen
mutant mbar_init_count     $cg 'const int per_phase = al.arrivals * (al.kind == ir::AllocKind::cluster_barrier ? group_size(al.collective_axes) : 1);' 'const int per_phase = al.arrivals;' codegen
mutant multicast_box_whole $cg '        box[0] /= n;' '        box[0] /= 1;' codegen
mutant tma_store_coords    $cg 'const auto at = fmt::format("{} * {}", expr(r.block[d]), unit);' 'const auto at = fmt::format("{} * {}", expr(r.block[d]), unit / unit);' codegen
mutant fmad_allowed        backends/nvrtc/src/nvrtc.cpp 'm == ir::math_mode::fast ? "--fmad=true" : "--fmad=false"};' '"--fmad=true"};' codegen
# ...the interpreter's protocol checks and schedulers...
mutant missed_phase_late   $ms 'if (b.completed >= seen + 2)' 'if (b.completed >= seen + 3)' interp
mutant over_arrival_unseen $mb '  if (b.pending == 0)
    report(check::over_arrival' '  if (b.pending < 0)
    report(check::over_arrival' interp
mutant tx_underflow_slack  $mb '  if (b.tx < 0)
    report(check::tx_underflow' '  if (b.tx < -16)
    report(check::tx_underflow' interp
mutant bulk_groups_lenient $mt 'const auto need = a.committed - n;' 'const auto need = a.committed - n - 1;' interp
# ...the tensor-core engine and the physical SMEM it reads...
mutant wgmma_decode_unswizzled backends/interp/src/engines/wgmma.cpp 'const auto bd = ir::wgmma::decode(op.b_desc[static_cast<std::size_t>(ks)]);' 'auto bd = ir::wgmma::decode(op.b_desc[static_cast<std::size_t>(ks)]); bd.swizzle = 0;' interp
mutant wgmma_wait_lenient  backends/interp/src/engines/wgmma.cpp 'if (op.what == async_op::kind::mma && op.agent == a.comp && op.group < need) return false;' 'if (op.what == async_op::kind::mma && op.agent == a.comp && op.group < need - 1) return false;' interp
mutant smem_logical_swizzled backends/interp/src/machine.hpp 'return static_cast<std::int64_t>(ir::swizzle_address(address + static_cast<std::uint32_t>(off), swizzle)) - address;' 'return off;' interp
mutant random_first_choice $ms 'const auto pick = rng_.below(n);' 'const auto pick = 0 * rng_.below(n);' interp
# ...and the limits of the front end and the verifier.
mutant box_limit_plus_1    $cp_ 'if (SDims::values[i] > ir::max_tma_box) return i;' 'if (SDims::values[i] > ir::max_tma_box + 1) return i;' 'frontend:tma_box'
mutant cluster_limit_plus_1 $kh 'if constexpr (size < 1 || size > limit) {' 'if constexpr (size < 1 || size > limit + 1) {' 'frontend:cluster'
mutant tmem_budget_plus_32 $kh '} else if constexpr (tmem_cols > ir::max_tmem_columns) {' '} else if constexpr (tmem_cols > ir::max_tmem_columns + 32) {' 'frontend:tmem_budget'
mutant threads_zero_allowed $kh 'if constexpr (N::value < 1 || N::value > ir::max_warpgroups) {' 'if constexpr (N::value < 0 || N::value > ir::max_warpgroups) {' 'frontend:threads'
mutant row_bytes_unchecked $cp_ '} else if constexpr (bytes % 16 != 0 || row_bytes % 16 != 0) {' '} else if constexpr (bytes % 16 != 0) {' 'frontend:copy_'
mutant verifier_smem_plus_1k $vf 'if (auto s = smem_bytes(k_); s > max_smem_bytes)' 'if (auto s = smem_bytes(k_); s > max_smem_bytes + 1024)' verifier
mutant verifier_box_plus_1 $vf 'if (e > max_tma_box)' 'if (e > max_tma_box + 1)' verifier

# ...and the tensor-core numbers and bounds no test used to see (issue 24 item 9). The host
# backend does not run wgmma or tcgen05 yet: tests/nvrtc/test_codegen_mma_numbers.cpp evaluates
# the generated expressions for every thread against ir/wgmma.hpp and ir/tcgen05.hpp.
tc=backends/nvrtc/src/tcgen05.cpp
#   A float max reduction folded from 0 instead of its identity: wrong only on all-negative rows.
mutant reduce_max_identity_zero $cg '      const std::string init = fp ? (v.op == ir::ValueOp::reduce_sum ? "-0.0f" : "__int_as_float(0x7fc00000)")' '      const std::string init = fp ? (v.op == ir::ValueOp::reduce_sum ? "-0.0f" : v.op == ir::ValueOp::reduce_max ? "0.0f" : "__int_as_float(0x7fc00000)")' codegen
#   wgmma A from registers with each register's odd element in the low half.
mutant wgmma_a_pack_swapped $wg 'elem[2 * r], elem[2 * r + 1], r < 3' 'elem[2 * r + 1], elem[2 * r], r < 3' codegen
#   An M = 128 wgmma whose second m64 block reads block 0's rows of A again.
mutant wgmma_m128_block0   $wg 'p.a_start(mb, ks)));' 'p.a_start(0, ks)));' codegen
#   tcgen05.ld addressed in bytes instead of 32-bit columns; its lane field the warp index
#   instead of the warp's first lane; tcgen05.st of 16-bit A with its halves swapped.
mutant tmem_ld_column_bytes $tc 'sc::tmem_ld_32x32b_x{}(row_addr + static_cast<unsigned>(c0), tr);' 'sc::tmem_ld_32x32b_x{}(row_addr + static_cast<unsigned>(c0 * 4), tr);' codegen
mutant tmem_ld_lane_warp_index $tc '(static_cast<unsigned>(lane / 32 * 32) << 16);", tmem_address(c, t0_ref)' '(static_cast<unsigned>(lane / 32) << 16);", tmem_address(c, t0_ref)' codegen
#   A TMEM ring's stage dropped from the MMA's and the load's address: every tile in stage 0.
mutant tmem_ring_stage_dropped $tc 'c.expr(r.index[0]),' '0,' codegen
#   The interpreter's MMA writing a ring's stage 0 whichever stage its address names.
mutant interp_ring_stage_dropped backends/interp/src/engines/tcgen05.cpp 'jc = (col - col0) % cols, d_base = stage * d.shape[d.shape.size() - 2] * cols;' 'jc = (col - col0) % cols, d_base = 0;' interp
mutant tmem_st_halves_swapped $tc 'elem("f", "2 * j", "(c0 + j) * 2"), elem("(f + 1)", "2 * j + 1", "(c0 + j) * 2 + 1")' 'elem("(f + 1)", "2 * j + 1", "(c0 + j) * 2 + 1"), elem("f", "2 * j", "(c0 + j) * 2")' codegen
#   The run-time verifier accepting 544 TMEM columns (512 + the least allocation).
mutant verifier_tmem_plus_32 $vf 'if (auto t = tmem_columns(k_); t > max_tmem_columns)' 'if (auto t = tmem_columns(k_); t > max_tmem_columns + 32)' verifier
#   Cluster-barrier scopes blind to TMEM loads: the persistent pair GEMM's accumulator hand-back
#   goes .cta, and the even CTA's next MMA races the odd CTA's TMEM read.
mutant scope_tmem_read_ignored dsl/src/ir/scopes.cpp 'loaded_refs(k, k.stmts[order[w].id], ValueOp::load_tmem)' 'loaded_refs(k, k.stmts[order[w].id], ValueOp::scalar)' interp
#   The tensor core reads every FP6 operand as e2m3, e3m2's too (gemm_blackwell_mx fmt=6's A).
#   (A slot permutation inside TMA's FP6 units would be no mutant: A and B move alike, and a
#   permutation of K applied to both leaves every dot product as it was, on the GPU too.)
mutant fp6_format_e2m3_only dsl/src/ir/tcgen05.cpp 'out[0] = mx::decode(mx::unit_format(t), ' 'out[0] = mx::decode(mx::e2m3, ' interp
#   The MMA tolerance ten times looser.
mutant mma_tolerance_10x   backends/interp/src/tolerance.cpp '    b += (kd * std::ldexp(1.0, -23) + steps * u_step + u_in) * sum_bound + std::ldexp(std::abs(reference), -mantissa_bits(output));' '    b += 10 * ((kd * std::ldexp(1.0, -23) + steps * u_step + u_in) * sum_bound + std::ldexp(std::abs(reference), -mantissa_bits(output)));' interp

# Once a known hole (ordering that only running the code shows), now killed: the host backend
# runs the generated code (host_tests plants the same bug and sees unwritten elements stored), and
# codegen_tests counts the warpgroup barriers of a warp-specialized kernel (the first to fail).
#   A TMA store issued without the warpgroup barrier: lane 0 may start the store before the other
#   lanes' SMEM writes are done. The text still has its fence and its numbers.
mutant store_without_wg_sync $cg '                       ir::alloc_name(k_, m.id), k_.params[g.id].name));
      sync_before_issue(line);' '                       ir::alloc_name(k_, m.id), k_.params[g.id].name));' codegen

# ---- arguments --------------------------------------------------------------------------------
filter=.
if [[ "${1:-}" == --list ]]; then
  for i in "${!names[@]}"; do printf '%-26s %-40s %s\n' "${names[$i]}" "${files[$i]}" "${suites[$i]}"; done
  exit 0
elif [[ "${1:-}" == --check ]]; then
  # The code moves under the mutants: each FROM must still occur exactly once in its file (what
  # a run checks before building anything, here without the scratch copy), TO must differ from
  # it, and names must be unique (a filter picks mutants by name).
  bad=0
  declare -A seen_name
  for i in "${!names[@]}"; do
    name=${names[$i]} file=$here/${files[$i]}
    if [[ -n "${seen_name[$name]:-}" ]]; then echo "mutant $name: the name is used twice"; bad=1; fi
    seen_name[$name]=1
    if [[ "${froms[$i]}" == "${tos[$i]}" ]]; then echo "mutant $name: TO is FROM, it plants nothing"; bad=1; fi
    if [[ ! -f "$file" ]]; then echo "mutant $name: no file ${files[$i]}"; bad=1; continue; fi
    n=$(perl -e 'my ($f, $from) = @ARGV; open my $in, "<", $f or die; local $/; my $t = <$in>; my $n = () = $t =~ /\Q$from\E/g; print $n;' \
          "$file" "${froms[$i]}")
    if [[ "$n" != 1 ]]; then echo "mutant $name: its FROM occurs $n times in ${files[$i]} (must be exactly once): re-point it at the code"; bad=1; fi
  done
  if [[ $bad != 0 ]]; then echo "mutation check --check: some mutants no longer apply"; exit 1; fi
  echo "mutation check --check: all ${#names[@]} mutants apply (each FROM exactly once in its file)"
  exit 0
elif [[ -n "${1:-}" ]]; then
  filter=$1
fi
timeout_s=${STAGECRAFT_MUTATION_TIMEOUT:-600}

# ---- the scratch copy -------------------------------------------------------------------------
scratch=${STAGECRAFT_MUTATION_DIR:-$(mktemp -d /tmp/stagecraft-mutants.XXXXXX)}
mkdir -p "$scratch/src"
echo "mutation check: scratch copy in $scratch"
rm -rf "$scratch/src" && mkdir -p "$scratch/src"
(cd "$here" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$scratch/src"
src=$scratch/src build=$scratch/build
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
nice -n 10 cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGECRAFT_BUILD_BENCH=OFF "${launcher[@]}" > "$scratch/configure.log"
have_nvrtc=0
grep -q "NVRTC backend ON" "$scratch/configure.log" && have_nvrtc=1

# A suite is a list of steps, TARGETS::COMMAND: build TARGETS (ninja), then run COMMAND. Steps
# run in order and the first failing one kills the mutant, so later ones are not even built.
steps_of() {
  case $1 in
    codegen) echo "codegen_tests::tests/codegen_tests --abort"
             [[ $have_nvrtc == 1 ]] && echo "nvrtc_tests::tests/nvrtc_tests --abort"
             # the generated code run on the CPU: what the text's numbers cannot show (ordering)
             echo "host_tests::tests/host_tests --abort" ;;
    interp) echo "interp_tests::tests/interp_tests --abort [schedules]"
            echo "zoo_tests::tests/zoo_tests --abort"
            echo "interp_tests::tests/interp_tests --abort" ;;
    verifier) echo "unit_tests::tests/unit_tests --abort [verify]"
              echo "unit_tests::tests/unit_tests --abort" ;;
    # compile-fail cases compile their own sources: nothing to build
    frontend:*) echo "::ctest --test-dir . -L compile-fail -R failtest\\.${1#frontend:} -j 2" ;;
  esac
}

# Runs SUITE; prints what killed the mutant ("build" if it did not build), or nothing.
run_suite() {
  local suite=$1 log=$2 step targets cmd
  while IFS= read -r step; do
    targets=${step%%::*} cmd=${step#*::}
    if [[ -n "$targets" ]] && ! nice -n 10 ninja -C "$build" $targets >> "$log" 2>&1; then
      echo build
      return
    fi
    if ! (cd "$build" && set -f && timeout "$timeout_s" nice -n 10 $cmd) >> "$log" 2>&1; then
      echo "$cmd"
      return
    fi
  done < <(steps_of "$suite")
}

# Pick the mutants, check each still applies, and make sure each suite passes unmutated: a
# kill by a suite that already fails would mean nothing.
apply() {  # FILE FROM TO: exactly one occurrence, or fail
  perl -e '
    my ($f, $from, $to) = @ARGV;
    open my $in, "<", $f or die "$f: $!\n"; local $/; my $t = <$in>; close $in;
    my $n = () = $t =~ /\Q$from\E/g;
    die "the mutant no longer applies: \"$from\" occurs $n times in $f\n" unless $n == 1;
    $t =~ s/\Q$from\E/$to/;
    open my $out, ">", $f or die "$f: $!\n"; print $out $t; close $out;' "$@"
}
selected=()
for i in "${!names[@]}"; do
  [[ "${names[$i]}" =~ $filter ]] || continue
  cp "$src/${files[$i]}" "$scratch/check.tmp"
  apply "$scratch/check.tmp" "${froms[$i]}" "${tos[$i]}" || exit 2
  selected+=("$i")
done
rm -f "$scratch/check.tmp"
[[ ${#selected[@]} -gt 0 ]] || { echo "no mutant matches '$filter'"; exit 2; }

declare -A baseline_done
for i in "${selected[@]}"; do
  s=${suites[$i]}
  [[ -n "${baseline_done[$s]:-}" ]] && continue
  log=$scratch/baseline-${s//[^A-Za-z0-9_]/_}.log
  : > "$log"
  echo "baseline: $s"
  failed=$(run_suite "$s" "$log")
  [[ -z "$failed" ]] || { echo "the unmutated tree fails '$failed' ($log): fix that first"; exit 2; }
  baseline_done[$s]=1
done

# ---- one mutant at a time ---------------------------------------------------------------------
results=()
survivors=0
for i in "${selected[@]}"; do
  name=${names[$i]} file=${files[$i]} suite=${suites[$i]}
  log=$scratch/mutant-$name.log
  : > "$log"
  cp "$src/$file" "$scratch/pristine"
  apply "$src/$file" "${froms[$i]}" "${tos[$i]}"
  start=$SECONDS
  failed=$(run_suite "$suite" "$log")
  if [[ "$failed" == build ]]; then
    verdict="NO-BUILD (see $log)"
  elif [[ -n "$failed" ]]; then
    verdict="KILLED by ${failed}"
  else
    verdict="SURVIVED"
    survivors=$((survivors + 1))
  fi
  cp "$scratch/pristine" "$src/$file"
  results+=("$(printf '%-26s %-36s %4ss  %s' "$name" "$file" $((SECONDS - start)) "$verdict")")
  echo "${results[-1]}"
done
# Leave the scratch build matching the tree again, for the next run.
nice -n 10 ninja -C "$build" codegen_tests interp_tests zoo_tests unit_tests $([[ $have_nvrtc == 1 ]] && echo nvrtc_tests) > /dev/null 2>&1 || true

echo
echo "mutant                     file                                 time  verdict"
printf '%s\n' "${results[@]}"
echo "${#selected[@]} mutants, $survivors survived"
[[ $survivors -eq 0 ]]
