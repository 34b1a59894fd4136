/*
 * xlac_runtime.c — support code for ahead-of-time compiled xlac modules.
 *
 * Compile it with your program (C99 + POSIX threads):
 *     cc -std=c99 -O2 -pthread -c xlac_runtime.c
 * and link with -lpthread. It provides the default run options (sequential
 * parallel_for, stubs that report missing services clearly), a pthreads
 * thread pool for parallel_for, an aligned temp-arena allocator and a few
 * diagnostics. See part 2 of xlac_runtime.h.
 */
#define _POSIX_C_SOURCE 200809L
#define _GNU_SOURCE   /* syscall() for the futex */

#include "xlac_runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * Status strings and error reporting
 * --------------------------------------------------------------------------- */

const char *xlac_status_string(int status) {
  switch (status) {
    case XLAC_OK: return "ok";
    case XLAC_ERROR_INVALID_ARGUMENT: return "invalid argument (NULL, misaligned or overlapping buffer)";
    case XLAC_ERROR_NO_MEMORY: return "out of memory for the temp arena";
    case XLAC_ERROR_MISSING_SERVICE: return "a service the module needs was not provided";
    case XLAC_ERROR_ABI_MISMATCH: return "ABI mismatch between header, object and xlac_runtime.h";
    case XLAC_ERROR_SERVICE_FAILED: return "a service failed";
    case XLAC_ERROR_CPU_UNSUPPORTED:
      return "this CPU lacks an instruction-set extension the code uses (xlac_cpu_missing_feature names it)";
    default: return "unknown xlac status";
  }
}

static void report_error_stderr(void *runtime_ctx, int status, const char *message) {
  (void)runtime_ctx;
  fprintf(stderr, "xlac: %s (%s)\n", message ? message : "error", xlac_status_string(status));
}

/* ---------------------------------------------------------------------------
 * Defaults for services the caller did not provide
 * --------------------------------------------------------------------------- */

static int missing(const char *service, const char *field) {
  fprintf(stderr,
          "xlac: the compiled module called the %s service, but the caller did not provide one "
          "(set xlac_run_options.%s)\n",
          service, field);
  return XLAC_ERROR_MISSING_SERVICE;
}

static int missing_collective(void *runtime_ctx, const xlac_collective_op *op) {
  (void)runtime_ctx;
  (void)op;
  return missing("collective (all-reduce, all-gather, ...)", "collective");
}

static int missing_infeed(void *runtime_ctx, void *buffer, int64_t byte_size, const char *shape) {
  (void)runtime_ctx;
  (void)buffer;
  (void)byte_size;
  (void)shape;
  return missing("infeed", "infeed");
}

static int missing_outfeed(void *runtime_ctx, const void *buffer, int64_t byte_size,
                           const char *shape) {
  (void)runtime_ctx;
  (void)buffer;
  (void)byte_size;
  (void)shape;
  return missing("outfeed", "outfeed");
}

static void set_message(xlac_custom_call_op *op, const char *text) {
  size_t n;
  if (op->error == NULL || op->error_capacity <= 0) return;
  n = strlen(text);
  if (n > (size_t)op->error_capacity - 1) n = (size_t)op->error_capacity - 1;
  memcpy(op->error, text, n);
  op->error[n] = 0;
}

static int missing_custom_call(void *runtime_ctx, xlac_custom_call_op *op) {
  char text[512];
  (void)runtime_ctx;
  snprintf(text, sizeof text,
           "the compiled module called custom call target \"%s\" (instruction %s), but the caller did "
           "not provide a custom-call service (set xlac_run_options.custom_call, e.g. to "
           "xlac_custom_call_dispatch)",
           op && op->target ? op->target : "", op && op->instruction ? op->instruction : "");
  fprintf(stderr, "xlac: %s\n", text);
  if (op != NULL) set_message(op, text);
  return XLAC_ERROR_MISSING_SERVICE;
}

/* ---------------------------------------------------------------------------
 * Custom-call targets for AOT programs
 * --------------------------------------------------------------------------- */

typedef void (*original_fn)(void *out, const void **in);
typedef void (*status_fn)(void *out, const void **in, XlaCustomCallStatus *status);
typedef void (*unified_fn)(void *out, const void **in, const char *opaque, size_t opaque_len,
                           XlaCustomCallStatus *status);

static struct {
  char *name;
  xlac_custom_call_target fn;
  int api_version;
} custom_call_targets[XLAC_CUSTOM_CALL_MAX_TARGETS];
static int num_custom_call_targets;

int xlac_custom_call_register(const char *target, xlac_custom_call_target fn, int api_version) {
  int k;
  char *copy;
  if (target == NULL || fn == NULL || api_version < 0 || api_version > XLAC_CUSTOM_CALL_API_TYPED_FFI)
    return XLAC_ERROR_INVALID_ARGUMENT;
  for (k = 0; k < num_custom_call_targets; ++k) {
    if (strcmp(custom_call_targets[k].name, target) == 0) {
      custom_call_targets[k].fn = fn;
      custom_call_targets[k].api_version = api_version;
      return XLAC_OK;
    }
  }
  if (num_custom_call_targets == XLAC_CUSTOM_CALL_MAX_TARGETS) return XLAC_ERROR_INVALID_ARGUMENT;
  copy = (char *)malloc(strlen(target) + 1);
  if (copy == NULL) return XLAC_ERROR_NO_MEMORY;
  strcpy(copy, target);
  custom_call_targets[num_custom_call_targets].name = copy;
  custom_call_targets[num_custom_call_targets].fn = fn;
  custom_call_targets[num_custom_call_targets].api_version = api_version;
  ++num_custom_call_targets;
  return XLAC_OK;
}

static int custom_call_failed(xlac_custom_call_op *op, const char *why) {
  char text[XLAC_CUSTOM_CALL_MESSAGE_MAX + 256];
  snprintf(text, sizeof text, "custom call target \"%s\" (instruction %s): %s", op->target,
           op->instruction ? op->instruction : "", why);
  set_message(op, text);
  return XLAC_ERROR_SERVICE_FAILED;
}

int xlac_custom_call_dispatch(void *runtime_ctx, xlac_custom_call_op *op) {
  int k;
  void *out;
  const void **in;
  XlaCustomCallStatus status;
  (void)runtime_ctx;
  if (op == NULL || op->target == NULL) return XLAC_ERROR_INVALID_ARGUMENT;
  for (k = 0; k < num_custom_call_targets; ++k)
    if (strcmp(custom_call_targets[k].name, op->target) == 0) break;
  if (k == num_custom_call_targets)
    return custom_call_failed(op, "not registered (xlac_custom_call_register)");
  if (custom_call_targets[k].api_version != 0 && custom_call_targets[k].api_version != op->api_version)
    return custom_call_failed(op, "registered for another api_version than the instruction's");
  out = op->result_is_tuple ? (void *)op->results : (op->num_results > 0 ? op->results[0] : NULL);
  in = (const void **)op->operands;
  XlaCustomCallStatusSetSuccess(&status);
  switch (op->api_version) {
    case XLAC_CUSTOM_CALL_API_ORIGINAL:
      ((original_fn)custom_call_targets[k].fn)(out, in);
      return XLAC_OK;
    case XLAC_CUSTOM_CALL_API_STATUS_RETURNING:
      ((status_fn)custom_call_targets[k].fn)(out, in, &status);
      break;
    case XLAC_CUSTOM_CALL_API_STATUS_RETURNING_UNIFIED:
      ((unified_fn)custom_call_targets[k].fn)(out, in, op->opaque, (size_t)op->opaque_len, &status);
      break;
    default:
      return custom_call_failed(op, "the typed FFI (API_VERSION_TYPED_FFI) is not supported for "
                                    "functions registered with xlac_custom_call_register");
  }
  if (status.failed) return custom_call_failed(op, status.message);
  return XLAC_OK;
}

void xlac_parallel_for_sequential(void *runtime_ctx, int64_t n, xlac_parallel_body body, void *ctx) {
  int64_t i;
  (void)runtime_ctx;
  for (i = 0; i < n; ++i) body(ctx, i);
}

void xlac_run_options_init(xlac_run_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->abi_version = XLAC_ABI_VERSION;
  opts->runtime_ctx = NULL;
  opts->parallel_for = xlac_parallel_for_sequential;
  opts->replica_id = 0;
  opts->num_replicas = 1;
  opts->collective = missing_collective;
  opts->infeed = missing_infeed;
  opts->outfeed = missing_outfeed;
  opts->custom_call = missing_custom_call;
  opts->report_error = report_error_stderr;
  opts->cancel = NULL;
  opts->partition_id = 0;
  opts->num_threads = 1;
  opts->num_partitions = 1;
}

int xlac_check_options(const xlac_program_info *info, const xlac_run_options *opts) {
  static const struct {
    uint64_t bit;
    const char *service, *field;
  } services[] = {
      {XLAC_SERVICE_COLLECTIVE, "collective", "collective"},
      {XLAC_SERVICE_INFEED, "infeed", "infeed"},
      {XLAC_SERVICE_OUTFEED, "outfeed", "outfeed"},
      {XLAC_SERVICE_CUSTOM_CALL, "custom-call", "custom_call"},
  };
  size_t k;
  if (info == NULL) {
    fprintf(stderr, "xlac: xlac_check_options: info is NULL\n");
    return XLAC_ERROR_INVALID_ARGUMENT;
  }
  if (info->abi_version != XLAC_ABI_VERSION) {
    fprintf(stderr, "xlac: %s was compiled for ABI version %lld, this xlac_runtime.h is version %d\n",
            info->name, (long long)info->abi_version, XLAC_ABI_VERSION);
    return XLAC_ERROR_ABI_MISMATCH;
  }
  if (opts != NULL && opts->abi_version != XLAC_ABI_VERSION) {
    fprintf(stderr, "xlac: run options have abi_version %lld, expected %d (use xlac_run_options_init)\n",
            (long long)opts->abi_version, XLAC_ABI_VERSION);
    return XLAC_ERROR_ABI_MISMATCH;
  }
  if (xlac_check_cpu(info) != XLAC_OK) {
    fprintf(stderr, "xlac: %s was compiled for CPU %s and uses %s, which this CPU lacks (compile it for "
            "an older CPU, e.g. xlac compile --cpu x86-64-v2)\n", info->name,
            info->target_cpu && info->target_cpu[0] ? info->target_cpu : "generic",
            xlac_cpu_missing_feature(info));
    return XLAC_ERROR_CPU_UNSUPPORTED;
  }
  for (k = 0; k < sizeof services / sizeof services[0]; ++k) {
    int provided = 0, is_stub = 0;
    if (!(info->required_services & services[k].bit)) continue;
    if (opts != NULL) {
      switch (services[k].bit) {
        case XLAC_SERVICE_COLLECTIVE:
          provided = opts->collective != NULL;
          is_stub = opts->collective == missing_collective;
          break;
        case XLAC_SERVICE_INFEED:
          provided = opts->infeed != NULL;
          is_stub = opts->infeed == missing_infeed;
          break;
        case XLAC_SERVICE_OUTFEED:
          provided = opts->outfeed != NULL;
          is_stub = opts->outfeed == missing_outfeed;
          break;
        default:
          provided = opts->custom_call != NULL;
          is_stub = opts->custom_call == missing_custom_call;
          break;
      }
    }
    if (!provided || is_stub) {
      fprintf(stderr, "xlac: %s needs the %s service, which the caller did not provide (set "
              "xlac_run_options.%s)\n", info->name, services[k].service, services[k].field);
      return XLAC_ERROR_MISSING_SERVICE;
    }
  }
  return XLAC_OK;
}

/* ---------------------------------------------------------------------------
 * Temp arena
 * --------------------------------------------------------------------------- */

void *xlac_temp_alloc(const xlac_program_info *info) {
  void *p = NULL;
  size_t size;
  if (info == NULL || info->temp_size <= 0) return NULL;
  size = (size_t)info->temp_size;
  if (posix_memalign(&p, XLAC_ALIGNMENT, size) != 0) return NULL;
  return p;
}

void xlac_temp_free(void *temp) { free(temp); }

/* ---------------------------------------------------------------------------
 * Thread pool
 * --------------------------------------------------------------------------- */

/* The same design as the JIT's pool (xlac/codegen/thread_pool.py): the caller
 * takes the pool with a compare-and-swap (a call that finds it taken — nested
 * in a body, or from another thread — runs inline), publishes the job, bumps
 * `generation` and wakes sleeping workers (a futex on Linux); everyone,
 * the caller included, grabs tasks one at a time from `next` =
 * (generation << 32) | task by compare-and-swap, so a late or descheduled
 * thread leaves its share to the others and a stale one cannot take a task
 * of a newer job; the caller returns once `done` counts every task.  A job
 * of n tasks takes at most n - 1 workers besides the caller (the first to
 * join; only that many sleepers are woken).  Workers spin XLAC_POOL_SPIN_NS
 * between jobs, then sleep. */

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif
#include <sched.h>
#include <time.h>

#define XLAC_POOL_SPIN_NS 50000
#define XLAC_LINE 64

struct xlac_worker_arg {
  xlac_thread_pool *pool;
  int64_t index;
};

struct xlac_thread_pool {
  int64_t lock;                       /* 1 while a parallel_for owns the pool */
  char pad0[XLAC_LINE - 8];
  uint32_t generation;                /* bumped for every job (the futex word) */
  uint32_t pad1a;
  int64_t sleepers;                   /* workers asleep on it */
  char pad1[XLAC_LINE - 16];
  int64_t next;                       /* (generation << 32) | the next task */
  char pad2[XLAC_LINE - 8];
  int64_t done;                       /* tasks of the job finished */
  char pad3[XLAC_LINE - 8];
  int64_t joined;                     /* (generation << 32) | workers that took part */
  char pad3b[XLAC_LINE - 8];
  xlac_parallel_body body;            /* the job */
  void *ctx;
  int64_t n;
  int64_t max_workers;                /* workers that take part (the first to join) */
  int num_threads;                    /* started worker threads */
  int stop;
  pthread_t *threads;
  struct xlac_worker_arg *args;
};

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static void futex_wait(uint32_t *word, uint32_t value) {
#if defined(__linux__)
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
#else
  struct timespec nap = {0, 50000};
  (void)word; (void)value;
  nanosleep(&nap, NULL);
#endif
}

static void futex_wake(uint32_t *word, int count) {
#if defined(__linux__)
  syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
#else
  (void)word; (void)count;
#endif
}

static void futex_wake_all(uint32_t *word) { futex_wake(word, 0x7fffffff); }

/* Takes one of job `gen`'s max_workers places (first come: a woken sleeper
 * and a spinning worker alike); 0 when they are taken or the job is over.
 * The generation beside the count keeps a late worker off the next job. */
static int join_job(xlac_thread_pool *pool, uint64_t gen) {
  int64_t word = __atomic_load_n(&pool->joined, __ATOMIC_ACQUIRE);
  for (;;) {
    if ((uint64_t)word >> 32 != gen) return 0;
    if ((word & 0xffffffff) >= __atomic_load_n(&pool->max_workers, __ATOMIC_ACQUIRE)) return 0;
    if (__atomic_compare_exchange_n(&pool->joined, &word, word + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      return 1;
  }
}

/* Grabs and runs tasks of job `gen` until none is left. */
static void run_job(xlac_thread_pool *pool, uint64_t gen) {
  for (;;) {
    int64_t word = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE);
    int64_t task, n, stop;
    xlac_parallel_body body;
    void *ctx;
    if ((uint64_t)word >> 32 != gen) return;
    task = word & 0xffffffff;
    n = __atomic_load_n(&pool->n, __ATOMIC_ACQUIRE);
    if (task >= n) return;
    body = __atomic_load_n(&pool->body, __ATOMIC_ACQUIRE);
    ctx = __atomic_load_n(&pool->ctx, __ATOMIC_ACQUIRE);
    stop = task + 1;
    if (!__atomic_compare_exchange_n(&pool->next, &word, (int64_t)((gen << 32) | (uint64_t)stop), 0,
                                     __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
      continue;
    body(ctx, task);
    __atomic_fetch_add(&pool->done, stop - task, __ATOMIC_RELEASE);
  }
}

static void *worker(void *arg) {
  struct xlac_worker_arg *w = (struct xlac_worker_arg *)arg;
  xlac_thread_pool *pool = w->pool;
  uint32_t seen = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
  int64_t since = 0, spins = 0;
  for (;;) {
    uint32_t g;
    if (__atomic_load_n(&pool->stop, __ATOMIC_ACQUIRE)) return NULL;
    g = __atomic_load_n(&pool->generation, __ATOMIC_ACQUIRE);
    if (g != seen) {
      seen = g;
      since = 0;
      if (join_job(pool, g)) run_job(pool, g);
      continue;
    }
    cpu_relax();
    if (++spins & 63) continue;
    if (since == 0) {
      since = monotonic_ns();
      continue;
    }
    if (monotonic_ns() - since < XLAC_POOL_SPIN_NS) continue;
    __atomic_fetch_add(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pool->generation, __ATOMIC_SEQ_CST) == seen && !__atomic_load_n(&pool->stop, __ATOMIC_SEQ_CST))
      futex_wait(&pool->generation, seen);
    __atomic_fetch_sub(&pool->sleepers, 1, __ATOMIC_SEQ_CST);
    since = 0;
  }
}

xlac_thread_pool *xlac_thread_pool_create(int num_threads) {
  xlac_thread_pool *pool;
  int k;
  if (num_threads <= 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    num_threads = cpus > 0 ? (int)cpus : 1;
  }
  pool = (xlac_thread_pool *)calloc(1, sizeof *pool);
  if (pool == NULL) return NULL;
  /* The calling thread is one of the workers: start num_threads - 1 more. */
  pool->threads = (pthread_t *)calloc((size_t)num_threads, sizeof(pthread_t));
  pool->args = (struct xlac_worker_arg *)calloc((size_t)num_threads, sizeof(struct xlac_worker_arg));
  if (pool->threads == NULL || pool->args == NULL) {
    free(pool->threads);
    free(pool->args);
    free(pool);
    return NULL;
  }
  for (k = 0; k < num_threads - 1; ++k) {
    pool->args[k].pool = pool;
    pool->args[k].index = k;
    if (pthread_create(&pool->threads[k], NULL, worker, &pool->args[k]) != 0) break;
    pool->num_threads++;
  }
  return pool;
}

int xlac_thread_pool_size(const xlac_thread_pool *pool) { return pool ? pool->num_threads + 1 : 1; }

void xlac_thread_pool_destroy(xlac_thread_pool *pool) {
  int k;
  if (pool == NULL) return;
  __atomic_store_n(&pool->stop, 1, __ATOMIC_SEQ_CST);
  __atomic_fetch_add(&pool->generation, 1, __ATOMIC_SEQ_CST);
  futex_wake_all(&pool->generation);
  for (k = 0; k < pool->num_threads; ++k) pthread_join(pool->threads[k], NULL);
  free(pool->threads);
  free(pool->args);
  free(pool);
}

void xlac_parallel_for_thread_pool(void *runtime_ctx, int64_t n, xlac_parallel_body body, void *ctx) {
  xlac_thread_pool *pool = (xlac_thread_pool *)runtime_ctx;
  int64_t expected = 0, spins = 0, start = 0, workers;
  uint32_t gen;
  if (n <= 0) return;
  if (pool == NULL || pool->num_threads == 0 || n == 1 || n >= ((int64_t)1 << 31) ||
      !__atomic_compare_exchange_n(&pool->lock, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    xlac_parallel_for_sequential(NULL, n, body, ctx);   /* nested, or another thread has the pool */
    return;
  }
  /* No more workers than the tasks besides the caller's first. */
  workers = n - 1 < pool->num_threads ? n - 1 : pool->num_threads;
  gen = pool->generation + 1;
  pool->done = 0;
  __atomic_store_n(&pool->joined, (int64_t)((uint64_t)gen << 32), __ATOMIC_SEQ_CST);
  __atomic_store_n(&pool->next, (int64_t)((uint64_t)gen << 32), __ATOMIC_SEQ_CST);
  __atomic_thread_fence(__ATOMIC_RELEASE);   /* a stale worker that sees this job sees its `next` too */
  __atomic_store_n(&pool->body, body, __ATOMIC_RELEASE);
  __atomic_store_n(&pool->ctx, ctx, __ATOMIC_RELEASE);
  __atomic_store_n(&pool->n, n, __ATOMIC_RELEASE);
  __atomic_store_n(&pool->max_workers, workers, __ATOMIC_RELEASE);
  __atomic_store_n(&pool->generation, gen, __ATOMIC_SEQ_CST);
  /* Wake only as many as may take part (a sleeper woken too many sleeps again). */
  if (__atomic_load_n(&pool->sleepers, __ATOMIC_SEQ_CST) > 0) futex_wake(&pool->generation, (int)workers);
  run_job(pool, gen);   /* the caller works too */
  while (__atomic_load_n(&pool->done, __ATOMIC_ACQUIRE) < n) {
    cpu_relax();
    if (++spins & 63) continue;
    if (start == 0) start = monotonic_ns();
    else if (monotonic_ns() - start > XLAC_POOL_SPIN_NS) sched_yield();
  }
  __atomic_store_n(&pool->lock, 0, __ATOMIC_RELEASE);
}

void xlac_run_options_use_thread_pool(xlac_run_options *opts, xlac_thread_pool *pool) {
  opts->runtime_ctx = pool;
  opts->parallel_for = xlac_parallel_for_thread_pool;
  opts->num_threads = xlac_thread_pool_size(pool);
}

/* ---------------------------------------------------------------------------
 * Diagnostics
 * --------------------------------------------------------------------------- */

static void print_leaf(const char *kind, int64_t k, const xlac_shape_info *s) {
  printf("  %s %lld%s%s: %s (%lld bytes)\n", kind, (long long)k, s->name && s->name[0] ? " " : "",
         s->name ? s->name : "", s->shape, (long long)s->byte_size);
}

void xlac_print_program_info(const xlac_program_info *info) {
  int64_t k;
  printf("%s (HLO module %s, ABI %lld, %s %s)\n", info->name, info->module_name,
         (long long)info->abi_version, info->target_triple, info->target_cpu);
  for (k = 0; k < info->num_params; ++k) print_leaf("param", k, &info->params[k]);
  for (k = 0; k < info->num_results; ++k) print_leaf("result", k, &info->results[k]);
  printf("  temp: %lld bytes, aligned to %lld\n", (long long)info->temp_size,
         (long long)info->temp_alignment);
  if (info->abi_version >= 6 && info->num_cpu_features > 0) {
    printf("  needs:");
    for (k = 0; k < info->num_cpu_features; ++k) printf(" %s", info->cpu_features[k]);
    printf("\n");
  }
}

/* ---------------------------------------------------------------------------
 * Collectives over MPI (-DXLAC_WITH_MPI)
 * --------------------------------------------------------------------------- */

#ifdef XLAC_WITH_MPI
#include <mpi.h>

/* One communicator per replica group, made the first time the group meets. */
typedef struct mpi_group {
  int size;
  int64_t ids[64];
  MPI_Comm comm;
} mpi_group;

#define XLAC_MPI_MAX_GROUPS 64
static mpi_group mpi_groups[XLAC_MPI_MAX_GROUPS];
static int mpi_num_groups = 0;

static int mpi_rank(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* This device's group of op (NULL groups: every rank). */
static int mpi_group_comm(const xlac_collective_op *op, MPI_Comm *comm) {
  int me = mpi_rank(), g, k;
  const int64_t *ids = NULL;
  int size = 0;
  if (op->groups == NULL || op->num_groups <= 0) {
    *comm = MPI_COMM_WORLD;
    return XLAC_OK;
  }
  for (g = 0; g < op->num_groups && ids == NULL; ++g)
    for (k = 0; k < op->group_size; ++k)
      if (op->groups[g * op->group_size + k] == me) {
        ids = op->groups + g * op->group_size;
        size = op->group_size;
        break;
      }
  if (ids == NULL || size > 64) return XLAC_ERROR_SERVICE_FAILED;
  for (g = 0; g < mpi_num_groups; ++g)
    if (mpi_groups[g].size == size && memcmp(mpi_groups[g].ids, ids, size * sizeof(int64_t)) == 0) {
      *comm = mpi_groups[g].comm;
      return XLAC_OK;
    }
  if (mpi_num_groups == XLAC_MPI_MAX_GROUPS) return XLAC_ERROR_SERVICE_FAILED;
  {
    MPI_Group world, members;
    int ranks[64];
    for (k = 0; k < size; ++k) ranks[k] = (int)ids[k];
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, size, ranks, &members);
    if (MPI_Comm_create_group(MPI_COMM_WORLD, members, 0, comm) != MPI_SUCCESS) return XLAC_ERROR_SERVICE_FAILED;
    MPI_Group_free(&members);
    MPI_Group_free(&world);
    mpi_groups[mpi_num_groups].size = size;
    memcpy(mpi_groups[mpi_num_groups].ids, ids, size * sizeof(int64_t));
    mpi_groups[mpi_num_groups].comm = *comm;
    ++mpi_num_groups;
  }
  return XLAC_OK;
}

static MPI_Datatype mpi_type(int element_type, int *size) {
  switch (element_type) {
    case XLAC_PRED: *size = 1; return MPI_C_BOOL;
    case XLAC_S8: *size = 1; return MPI_INT8_T;
    case XLAC_S16: *size = 2; return MPI_INT16_T;
    case XLAC_S32: *size = 4; return MPI_INT32_T;
    case XLAC_S64: *size = 8; return MPI_INT64_T;
    case XLAC_U8: *size = 1; return MPI_UINT8_T;
    case XLAC_U16: *size = 2; return MPI_UINT16_T;
    case XLAC_U32: *size = 4; return MPI_UINT32_T;
    case XLAC_U64: *size = 8; return MPI_UINT64_T;
    case XLAC_F32: *size = 4; return MPI_FLOAT;
    case XLAC_F64: *size = 8; return MPI_DOUBLE;
    case XLAC_C64: *size = 8; return MPI_C_FLOAT_COMPLEX;
    case XLAC_C128: *size = 16; return MPI_C_DOUBLE_COMPLEX;
    default: *size = 0; return MPI_DATATYPE_NULL;   /* f16, bf16: not reducible by MPI */
  }
}

static MPI_Op mpi_op(int reduction, int element_type) {
  int logical = element_type == XLAC_PRED;
  switch (reduction) {
    case XLAC_REDUCE_SUM: return logical ? MPI_LOR : MPI_SUM;
    case XLAC_REDUCE_PRODUCT: return logical ? MPI_LAND : MPI_PROD;
    case XLAC_REDUCE_MIN: return logical ? MPI_LAND : MPI_MIN;
    case XLAC_REDUCE_MAX: return logical ? MPI_LOR : MPI_MAX;
    case XLAC_REDUCE_AND: return logical ? MPI_LAND : MPI_BAND;
    case XLAC_REDUCE_OR: return logical ? MPI_LOR : MPI_BOR;
    default: return MPI_OP_NULL;
  }
}

int xlac_mpi_collective(void *runtime_ctx, const xlac_collective_op *op) {
  MPI_Comm comm;
  int status, size, ok = MPI_SUCCESS;
  MPI_Datatype type;
  (void)runtime_ctx;
  if (op->kind == XLAC_COLLECTIVE_PERMUTE) {
    int me = mpi_rank(), source = -1;
    int64_t k, nreq = 0;
    MPI_Request reqs[64];
    for (k = 0; k < op->num_pairs && nreq < 64; ++k)
      if (op->pairs[2 * k] == me)
        MPI_Isend(op->input, (int)op->input_bytes, MPI_BYTE, (int)op->pairs[2 * k + 1], 7, MPI_COMM_WORLD,
                  &reqs[nreq++]);
    for (k = 0; k < op->num_pairs; ++k)
      if (op->pairs[2 * k + 1] == me) source = (int)op->pairs[2 * k];
    if (source < 0)
      memset(op->output, 0, (size_t)op->output_bytes);
    else
      ok = MPI_Recv(op->output, (int)op->output_bytes, MPI_BYTE, source, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall((int)nreq, reqs, MPI_STATUSES_IGNORE);
    return ok == MPI_SUCCESS ? XLAC_OK : XLAC_ERROR_SERVICE_FAILED;
  }
  status = mpi_group_comm(op, &comm);
  if (status != XLAC_OK) return status;
  switch (op->kind) {
    case XLAC_ALL_GATHER:
      ok = MPI_Allgather(op->input, (int)op->input_bytes, MPI_BYTE, op->output, (int)op->input_bytes, MPI_BYTE,
                         comm);
      break;
    case XLAC_ALL_TO_ALL: {
      int n;
      MPI_Comm_size(comm, &n);
      ok = MPI_Alltoall(op->input, (int)(op->input_bytes / n), MPI_BYTE, op->output, (int)(op->input_bytes / n),
                        MPI_BYTE, comm);
      break;
    }
    case XLAC_ALL_REDUCE:
    case XLAC_REDUCE_SCATTER:
      type = mpi_type(op->element_type, &size);
      if (type == MPI_DATATYPE_NULL || mpi_op(op->reduction, op->element_type) == MPI_OP_NULL)
        return XLAC_ERROR_SERVICE_FAILED;
      if (op->kind == XLAC_ALL_REDUCE)
        ok = MPI_Allreduce(op->input, op->output, (int)(op->input_bytes / size), type,
                           mpi_op(op->reduction, op->element_type), comm);
      else
        ok = MPI_Reduce_scatter_block(op->input, op->output, (int)(op->output_bytes / size), type,
                                      mpi_op(op->reduction, op->element_type), comm);
      break;
    default:
      return XLAC_ERROR_SERVICE_FAILED;
  }
  return ok == MPI_SUCCESS ? XLAC_OK : XLAC_ERROR_SERVICE_FAILED;
}

int xlac_run_options_use_mpi(xlac_run_options *opts, int64_t num_partitions) {
  int rank, size;
  if (num_partitions < 1) return XLAC_ERROR_INVALID_ARGUMENT;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  opts->collective = xlac_mpi_collective;
  opts->num_partitions = num_partitions;
  opts->num_replicas = size / num_partitions;
  opts->replica_id = rank / num_partitions;
  opts->partition_id = rank % num_partitions;
  return XLAC_OK;
}
#endif /* XLAC_WITH_MPI */
