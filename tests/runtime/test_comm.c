/* The run's ranks through the host's comm_* calls (core/runtime/comm.h).
 * Alone: who launched us is read from the launcher's variables only, the
 * calls copy, and a rank or type no call may name is an error naming the
 * call, its size and why.  Under mpiexec -np 2 (test_rt_comm_np2) the same
 * binary checks MPI's answers: sums, maxima and minima over the ranks, a
 * bcast from rank 1, a ring step, in place and not; a collective from
 * another thread than the one that opened MPI is refused in one line. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "host.h"

static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", NULL};

typedef struct fixture {
    dlg_services svc;
    dlg_host_impl *hi;
    const dlg_host *h;
    dlg_comm *comm;
} fixture;

static int fx_setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    char why[1024] = "";
    if (!fx || dlg_comm_open(&fx->comm, why, sizeof why) != 0) {
        print_error("dlg_comm_open: %s\n", why);
        free(fx);
        return -1;
    }
    dlg_services_init(&fx->svc, NULL, NULL, 0);
    dlg_services_set_context(&fx->svc, "c.ini:1: [job j]");
    fx->svc.comm = fx->comm;
    fx->hi = dlg_host_new(&fx->svc, "c.ini:1: [job j] w");
    fx->h = &fx->hi->pub;
    *state = fx;
    return 0;
}

static int fx_teardown(void **state)
{
    fixture *fx = *state;
    dlg_host_free(fx->hi);
    dlg_services_fini(&fx->svc);
    dlg_comm_close(fx->comm);
    free(fx);
    return 0;
}

/* Only a launcher's own variables say so; SLURM_PROCID is in a batch
 * script too, outside any MPI job. */
static void launched_by_its_variables(void **state)
{
    (void)state;
    char saved[4][64], var[128];
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        snprintf(saved[i], sizeof saved[i], "%s", v ? v : "");
        unsetenv(vars[i]);
    }
    const char *orank = getenv("OMPI_COMM_WORLD_RANK");
    char saved_rank[16];
    snprintf(saved_rank, sizeof saved_rank, "%s", orank ? orank : "");
    unsetenv("OMPI_COMM_WORLD_RANK");
    setenv("SLURM_PROCID", "0", 1);
    assert_false(dlg_comm_launched(var, sizeof var));
    assert_int_equal(dlg_comm_launched_rank(), 0);
    setenv("PMI_RANK", "3", 1);
    assert_true(dlg_comm_launched(var, sizeof var));
    assert_string_equal(var, "PMI_RANK=3");
    assert_int_equal(dlg_comm_launched_rank(), 3);
    unsetenv("PMI_RANK");
    setenv("PMIX_RANK", "1", 1);
    assert_true(dlg_comm_launched(var, sizeof var));
    assert_string_equal(var, "PMIX_RANK=1");
    unsetenv("PMIX_RANK");
    unsetenv("SLURM_PROCID");
    if (saved_rank[0])
        setenv("OMPI_COMM_WORLD_RANK", saved_rank, 1);
    for (int i = 0; vars[i]; i++)
        if (saved[i][0])
            setenv(vars[i], saved[i], 1);
}

static void alone(void **state)
{
    fixture *fx = *state;
    if (fx->comm)
        skip();
    const dlg_host *h = fx->h;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    assert_int_equal(ri.rank, 0);
    assert_int_equal(ri.size, 1);
    assert_string_equal(ri.engine, "self");
    assert_int_equal(ri.struct_size, sizeof ri);
    assert_true(DLG_RANK_HAS(&ri, local_size));
    assert_int_equal(ri.local_rank, 0);
    assert_int_equal(ri.local_size, 1);
    /* a key of this process's, the same on each call */
    uint64_t key = ri.node_key;
    assert_true(DLG_RANK_HAS(&ri, node_key) && key != 0);
    ri = (dlg_rank_info){.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    assert_true(ri.node_key == key);
    /* one built before node_key gets none */
    ri = (dlg_rank_info){.struct_size = offsetof(dlg_rank_info, node_key), .node_key = 7};
    h->comm_info(h, &ri);
    assert_false(DLG_RANK_HAS(&ri, node_key));
    assert_int_equal(ri.local_size, 1);
    assert_true(ri.node_key == 7);
    /* a plugin built before local_rank says a smaller size (or none):
     * the host writes nothing past it */
    static const uint32_t older[] = {offsetof(dlg_rank_info, local_rank), 0};
    for (size_t k = 0; k < 2; k++) {
        ri = (dlg_rank_info){.struct_size = older[k], .local_rank = -7, .local_size = -7};
        h->comm_info(h, &ri);
        assert_int_equal(ri.struct_size, offsetof(dlg_rank_info, local_rank));
        assert_false(DLG_RANK_HAS(&ri, local_rank));
        assert_int_equal(ri.size, 1);
        assert_int_equal(ri.local_rank, -7);
        assert_int_equal(ri.local_size, -7);
    }
    int node = -1, nodes = -1;
    dlg_comm_node(fx->comm, &node, &nodes);
    assert_true(node == 0 && nodes == 1);
    double s[3] = {1, 2, 3}, r[3] = {0};
    assert_int_equal(h->comm_allreduce(h, s, r, 3, DLG_COMM_F64), 0);
    assert_memory_equal(s, r, sizeof s);
    assert_int_equal(h->comm_bcast(h, s, sizeof s, 0), 0);
    assert_int_equal(h->comm_sendrecv(h, s, 0, r, 0, sizeof s), 0);
    assert_int_equal(h->comm_barrier(h), 0);

    assert_int_equal(h->comm_bcast(h, s, 8, 1), -DLG_EINTERNAL);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "c.ini:1: [job j] w: bcast of 8 bytes from rank 1: root rank 1 is not one of the run's 1 rank");
    assert_int_equal(h->comm_sendrecv(h, s, 1, r, 0, 4), -DLG_EINTERNAL);
    assert_string_equal(dlg_services_error(&fx->svc), "c.ini:1: [job j] w: sendrecv of 4 bytes to rank 1 from rank 0: "
                                                      "destination rank 1 is not one of the run's 1 rank");
    assert_int_equal(h->comm_allreduce(h, s, r, 2, (dlg_comm_type)7), -DLG_EINTERNAL);
    assert_string_equal(dlg_services_error(&fx->svc), "c.ini:1: [job j] w: allreduce of 2 (unknown type) elements: "
                                                      "element type 7 is not one of dlg_comm_type's");
}

/* Two ranks: the engine's answers. */
static void two_ranks(void **state)
{
    fixture *fx = *state;
    if (!fx->comm)
        skip();
    const dlg_host *h = fx->h;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    assert_int_equal(ri.size, 2);
    assert_string_equal(ri.engine, "mpi");
    assert_non_null(strstr(ri.library, "MPI"));
    int me = ri.rank, peer = 1 - me;
    /* both on this one node: local ranks 0 and 1 (MPI_COMM_TYPE_SHARED
     * keeps the world's order), and found at open: no collective here */
    assert_int_equal(ri.struct_size, sizeof ri);
    assert_int_equal(ri.local_size, 2);
    assert_int_equal(ri.local_rank, me);
    /* one node key for both: each sends its own, the sum is twice it */
    int64_t key[2] = {(int64_t)(ri.node_key >> 1), me ? 0 : (int64_t)(ri.node_key >> 1)};
    assert_true(ri.node_key != 0);
    assert_int_equal(h->comm_allreduce(h, key, key, 2, DLG_COMM_I64), 0);
    assert_true((uint64_t)key[0] == 2 * (ri.node_key >> 1) && (uint64_t)key[1] == ri.node_key >> 1);
    int node = -1, nodes = -1; /* one node, rank 0's: index 0 on both */
    dlg_comm_node(fx->comm, &node, &nodes);
    assert_true(node == 0 && nodes == 1);

    float f[5] = {1, 2, 3, 4, (float)me};
    assert_int_equal(h->comm_allreduce(h, f, f, 5, DLG_COMM_F32), 0); /* in place */
    float fw[5] = {2, 4, 6, 8, 1};
    assert_memory_equal(f, fw, sizeof f);
    int64_t i[2] = {me + 1, INT64_C(1) << 40}, io[2];
    assert_int_equal(h->comm_allreduce(h, i, io, 2, DLG_COMM_I64), 0);
    assert_true(io[0] == 3 && io[1] == INT64_C(1) << 41);

    char why[256];
    int64_t m = me * 10 + 5;
    assert_int_equal(
        dlg_comm_allreduce(fx->comm, DLG_COMM_CTL, &m, &m, 1, DLG_COMM_I64, DLG_COMM_MAX, why, sizeof why), 0);
    assert_true(m == 15);
    m = me * 10 + 5;
    assert_int_equal(
        dlg_comm_allreduce(fx->comm, DLG_COMM_CTL, &m, &m, 1, DLG_COMM_I64, DLG_COMM_MIN, why, sizeof why), 0);
    assert_true(m == 5);

    char text[16];
    snprintf(text, sizeof text, "from rank %d", me);
    assert_int_equal(h->comm_bcast(h, text, sizeof text, 1), 0);
    assert_string_equal(text, "from rank 1");

    double out[2] = {me, me + 0.5}, in[2] = {-1, -1};
    assert_int_equal(h->comm_sendrecv(h, out, peer, in, peer, sizeof out), 0);
    assert_true(in[0] == peer && in[1] == peer + 0.5);
    assert_int_equal(h->comm_sendrecv(h, out, peer, out, peer, sizeof out), 0); /* in place */
    assert_true(out[0] == peer);
    assert_int_equal(h->comm_barrier(h), 0);

    assert_int_equal(h->comm_bcast(h, text, 4, 2), -DLG_EINTERNAL);
    assert_string_equal(dlg_services_error(&fx->svc), "c.ini:1: [job j] w: bcast of 4 bytes from rank 2: "
                                                      "root rank 2 is not one of the run's 2 ranks");
}

typedef struct thread_call {
    const dlg_host *h;
    int rc;
} thread_call;

static void *allreduce_in_thread(void *arg)
{
    thread_call *tc = arg;
    double v[4] = {1, 2, 3, 4};
    tc->rc = tc->h->comm_allreduce(tc->h, v, v, 4, DLG_COMM_F64);
    return NULL;
}

/* MPI was given MPI_THREAD_FUNNELED: a worker thread's collective is the
 * plugin's bug, said as such (every rank refuses alike, none waits). */
static void another_thread(void **state)
{
    fixture *fx = *state;
    if (!fx->comm)
        skip();
    thread_call tc = {fx->h, 1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, allreduce_in_thread, &tc), 0);
    pthread_join(t, NULL);
    assert_int_equal(tc.rc, -DLG_EINTERNAL);
    assert_string_equal(dlg_services_error(&fx->svc),
                        "c.ini:1: [job j] w: allreduce of 4 f64 elements: called from a thread other than the one "
                        "that opened MPI (MPI_THREAD_FUNNELED): call the collectives from the thread that runs "
                        "setup and step");
    double v = 1; /* the ranks are still in step */
    assert_int_equal(fx->h->comm_allreduce(fx->h, &v, &v, 1, DLG_COMM_F64), 0);
    assert_true(v == 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launched_by_its_variables),
        cmocka_unit_test(alone),
        cmocka_unit_test(two_ranks),
        cmocka_unit_test(another_thread),
    };
    return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
