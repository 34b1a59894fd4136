/*
 * A 2-rank all-reduce compiled ahead of time by xlac, run with MPI:
 * every rank adds its replica id to x = [1, 2, 3, 4], the all-reduce sums
 * the ranks' vectors, and every rank prints [3, 5, 7, 9] (for 2 ranks).
 *
 *   xlac compile allreduce.hlo -o allreduce.o --header allreduce.h --name allreduce
 *   mpicc -std=c99 -DXLAC_WITH_MPI -I.. -c allreduce_mpi.c ../xlac_runtime.c
 *   mpicc -o allreduce_mpi allreduce_mpi.o allreduce.o xlac_runtime.o -lm -lpthread
 *   mpiexec -n 2 ./allreduce_mpi
 *
 * (make -C runtime/examples mpi does all of this).
 */
#include <mpi.h>
#include <stdio.h>

#include "allreduce.h"
#include "xlac_runtime.h"

int main(int argc, char **argv) {
  static float x[ALLREDUCE_PARAM0_ELEMENTS] = {1, 2, 3, 4};
  static float out[ALLREDUCE_RESULT0_ELEMENTS];
  xlac_run_options opts;
  int status, rank;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  xlac_run_options_init(&opts);
  status = xlac_run_options_use_mpi(&opts, 1);   /* one partition: every rank is a replica */
  if (status == XLAC_OK) status = xlac_check_options(&allreduce_info, &opts);
  if (status == XLAC_OK) status = allreduce_run(x, out, &opts);
  if (status != XLAC_OK) {
    fprintf(stderr, "rank %d: allreduce_run failed: %s\n", rank, xlac_status_string(status));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  printf("rank %d: %g %g %g %g\n", rank, out[0], out[1], out[2], out[3]);
  MPI_Finalize();
  return 0;
}
