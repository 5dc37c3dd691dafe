/* The C interface of the GPU benchmark module (libchokepoint_bench.so).
 *
 * The module is built only where the CUDA toolkit is found and is loaded by the CLI with
 * dlopen, so the chokepoint binary runs without CUDA. Only C types cross this boundary:
 * no C++ ABI, no exceptions; options and results are JSON text.
 *
 * Options (all optional):
 *   {"mode": "full" | "quick" | "selftest",   default "full"
 *    "devices": [0, 1],                         default: every visible GPU
 *    "only": ["h2d_pinned", ...],               default: every testcase of the mode
 *    "list": true}                              describe the testcases, touch no GPU
 * Result: the raw profile (machine/profile.h, schema "chokepoint.profile/1") without
 * judgement, or {"schema": ..., "error": "..."} when no GPU could be used; with "list",
 * {"testcases": [{"key", "description", "unit", "selftest"}]}.
 */
#ifndef CHOKEPOINT_BENCH_MODULE_API_H_
#define CHOKEPOINT_BENCH_MODULE_API_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a function below changes its signature or meaning. */
#define CHOKEPOINT_BENCH_ABI_VERSION 1

#define CHOKEPOINT_BENCH_MODULE_NAME "libchokepoint_bench.so"

/* Called before each testcase: done testcases so far, total, and a label such as
 * "GPU 0 h2d_pinned: host to device, pinned memory". */
typedef void (*chokepoint_bench_progress_fn)(void* ctx, int done, int total, const char* label);

/* Returns CHOKEPOINT_BENCH_ABI_VERSION. */
typedef int (*chokepoint_bench_abi_version_fn)(void);

/* Runs the benchmarks. *result_json always receives a NUL-terminated JSON document
 * (release it with chokepoint_bench_free). Returns 0 when at least one GPU ran (its
 * testcases may still be waived or failed), 1 when none could (the document holds
 * "error"), 2 for unusable options. progress may be NULL. */
typedef int (*chokepoint_bench_run_fn)(const char* options_json, chokepoint_bench_progress_fn progress,
                                       void* progress_ctx, char** result_json);

typedef void (*chokepoint_bench_free_fn)(char* result_json);

#ifdef __cplusplus
}
#endif

#endif /* CHOKEPOINT_BENCH_MODULE_API_H_ */
