/*
 * Calls an MLP compiled ahead of time by xlac from plain C.
 *
 *   xlac compile mlp.hlo -o mlp.o --header mlp.h --name mlp
 *   cc -std=c99 -I.. -c main.c && cc -std=c99 -pthread -c ../xlac_runtime.c
 *   cc -o mlp_example main.o mlp.o xlac_runtime.o -lm -lpthread
 *
 * (the Makefile does all of this). The inputs are made up deterministically:
 * element k of parameter p is (((7k + 3p) mod 17) - 8) / 16, exactly
 * representable, so any other implementation can reproduce the run.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mlp.h"
#include "xlac_runtime.h"

static void fill(float *a, int64_t n, int p) {
  int64_t k;
  for (k = 0; k < n; ++k) a[k] = (float)((7 * k + 3 * p) % 17 - 8) / 16.0f;
}

int main(void) {
  /* Buffers sized from the header's constants; static storage is aligned enough. */
  static float x[MLP_PARAM0_ELEMENTS], w1[MLP_PARAM1_ELEMENTS], b1[MLP_PARAM2_ELEMENTS];
  static float w2[MLP_PARAM3_ELEMENTS], b2[MLP_PARAM4_ELEMENTS];
  static float out[MLP_RESULT0_ELEMENTS];
  const xlac_shape_info *res = &mlp_info.results[0];
  xlac_run_options opts;
  xlac_thread_pool *pool;
  int64_t i, j, rows = res->dimensions[0], cols = res->dimensions[1];
  int status;

  fill(x, MLP_PARAM0_ELEMENTS, 0);
  fill(w1, MLP_PARAM1_ELEMENTS, 1);
  fill(b1, MLP_PARAM2_ELEMENTS, 2);
  fill(w2, MLP_PARAM3_ELEMENTS, 3);
  fill(b2, MLP_PARAM4_ELEMENTS, 4);

  /* Default services (sequential parallel_for, clear errors for missing
     services), with a pthreads pool for parallel_for. */
  xlac_run_options_init(&opts);
  pool = xlac_thread_pool_create(0);
  if (pool != NULL) xlac_run_options_use_thread_pool(&opts, pool);
  status = xlac_check_options(&mlp_info, &opts);
  if (status == XLAC_OK) status = mlp_run(x, w1, b1, w2, b2, out, &opts);
  xlac_thread_pool_destroy(pool);
  if (status != XLAC_OK) {
    fprintf(stderr, "mlp_run failed: %s\n", xlac_status_string(status));
    return 1;
  }

  xlac_print_program_info(&mlp_info);
  printf("result %s:\n", res->shape);
  for (i = 0; i < rows; ++i) {
    int64_t best = 0;
    for (j = 0; j < cols; ++j) {
      printf("%s%.9g", j ? " " : "  ", out[i * cols + j]);
      if (out[i * cols + j] > out[i * cols + best]) best = j;
    }
    printf("   -> class %lld\n", (long long)best);
  }
  return 0;
}
