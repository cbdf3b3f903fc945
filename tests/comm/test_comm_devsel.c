/* The comm workloads' device choice (comm_devsel.c, compiled in): the
 * option read and the node-local rank from the host (else the launcher's
 * variables), which core/nn's dlg_device_backend turns into a GPU
 * (test_cuda_host; end to end: ranks_gpus_fakegpu). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"};

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
    return 0;
}

static void test_parse(void **state)
{
    (void)state;
    char err[160];
    int idx = 99;
    assert_int_equal(comm_device_parse("cpu", &idx, err, sizeof err), 0);
    assert_int_equal(idx, COMM_DEV_CPU);
    assert_int_equal(comm_device_parse("cuda", &idx, err, sizeof err), 0);
    assert_int_equal(idx, COMM_DEV_ANY);
    assert_int_equal(comm_device_parse("cuda:3", &idx, err, sizeof err), 0);
    assert_int_equal(idx, 3);
    static const char *const bad[] = {"", "cuda:", "cuda:8", "cuda:-1", "cuda:1 ", "cuda0", "CPU"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(comm_device_parse(bad[i], &idx, err, sizeof err), -DLG_EINVAL);
        assert_non_null(strstr(err, "expected cpu, cuda or cuda:N"));
    }
    assert_int_equal(comm_device_parse(NULL, &idx, err, sizeof err), -DLG_EINVAL);
}

/* Rank 5 of 4 ranks a node is the second node's local rank 1 (Open MPI
 * says so), not 5 (core/nn's choice then takes GPU 1 of 3, not 2). */
static void test_local_rank_from_launcher(void **state)
{
    (void)state;
    const char *from = NULL;
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    int local = comm_local_rank(NULL, 5, &from);
    assert_int_equal(local, 1);
    assert_string_equal(from, "OMPI_COMM_WORLD_LOCAL_RANK");
    /* Open MPI's wins over a stale torchrun variable */
    setenv("LOCAL_RANK", "2", 1);
    assert_int_equal(comm_local_rank(NULL, 5, &from), 1);
    /* a malformed one is passed over for the next */
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1x", 1);
    setenv("SLURM_LOCALID", "3", 1);
    assert_int_equal(comm_local_rank(NULL, 5, &from), 3);
    assert_string_equal(from, "SLURM_LOCALID");
    unsetenv("SLURM_LOCALID");
    assert_int_equal(comm_local_rank(NULL, 5, &from), 2);
    assert_string_equal(from, "LOCAL_RANK");
    setenv("MPI_LOCALRANKID", "0", 1);
    assert_int_equal(comm_local_rank(NULL, 5, &from), 0);
    assert_string_equal(from, "MPI_LOCALRANKID");
}

/* No launcher variable: one node assumed, the global rank. */
static void test_local_rank_fallback(void **state)
{
    (void)state;
    const char *from = NULL;
    assert_int_equal(comm_local_rank(NULL, 6, &from), 6);
    assert_non_null(strstr(from, "no launcher"));
}

/* A host that says its ranks: local rank 2 of 4 on this node, as MPI
 * found it; `older` fills only what hosts before local_rank did. */
typedef struct info_host {
    dlg_host host;
    bool older;
} info_host;

static void say_info(const dlg_host *h, dlg_rank_info *out)
{
    const info_host *ih = (const info_host *)h;
    dlg_rank_info all = {sizeof all, 6, 8, "mpi", "", .local_rank = 2, .local_size = 4};
    size_t n = ih->older ? offsetof(dlg_rank_info, local_rank) : sizeof all;
    all.struct_size = (uint32_t)n;
    memcpy(out, &all, n);
}

/* The host's local rank wins over the launcher's variables (a stale
 * torchrun LOCAL_RANK, or Open MPI's where MPI said otherwise); a host
 * older than local_rank leaves it to them. */
static void test_local_rank_from_host(void **state)
{
    (void)state;
    info_host ih = {.host = {.struct_size = sizeof(dlg_host), .comm_info = say_info}};
    const char *from = NULL;
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    setenv("LOCAL_RANK", "3", 1);
    int local = comm_local_rank(&ih.host, 6, &from);
    assert_int_equal(local, 2);
    assert_non_null(strstr(from, "the host"));
    ih.older = true;
    assert_int_equal(comm_local_rank(&ih.host, 6, &from), 1);
    assert_string_equal(from, "OMPI_COMM_WORLD_LOCAL_RANK");
    /* a host without comm_info at all (struct_size short of it) */
    ih = (info_host){.host = {.struct_size = offsetof(dlg_host, comm_info), .comm_info = say_info}};
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("LOCAL_RANK");
    assert_int_equal(comm_local_rank(&ih.host, 6, &from), 6);
    assert_non_null(strstr(from, "no launcher"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test_setup_teardown(test_local_rank_from_launcher, clear_env, clear_env),
        cmocka_unit_test_setup_teardown(test_local_rank_fallback, clear_env, clear_env),
        cmocka_unit_test_setup_teardown(test_local_rank_from_host, clear_env, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
