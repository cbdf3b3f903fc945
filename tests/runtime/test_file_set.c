/* The distinct files a cell read (file_set.c): a file by two paths counts
 * once, at its size when first seen; directories and missing paths count
 * nothing; the set grows past its first table; threads adding at once
 * count each file once. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "file_set.h"

static char dir[] = "/tmp/dlg_file_set_XXXXXX";

/* A file of n bytes at folder/name; its path in path. */
static void put(const char *folder, const char *name, size_t n, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", folder, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < n; i++)
        fputc((int)(i & 0xff), f);
    assert_int_equal(fclose(f), 0);
}

static void write_file(const char *name, size_t n)
{
    char p[256];
    put(dir, name, n, p, sizeof p);
}

static void add(dlg_file_set *s, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    dlg_file_set_add_path(s, p);
}

static uint64_t bytes_of(dlg_file_set *s)
{
    uint64_t b = 0;
    assert_true(dlg_file_set_bytes(s, &b));
    return b;
}

/* The files the set holds, over its shards. */
static size_t files_in(const dlg_file_set *s)
{
    size_t n = 0;
    for (int i = 0; i < DLG_FILE_SET_SHARDS; i++)
        n += s->shards[i].n;
    return n;
}

static void paths(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    write_file("a", 1000);
    write_file("b", 24);
    char a[256], link_a[256], sub[256];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(link_a, sizeof link_a, "%s/hard_a", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    assert_int_equal(link(a, link_a), 0);
    assert_int_equal(mkdir(sub, 0700), 0);

    dlg_file_set s;
    dlg_file_set_init(&s);
    add(&s, "a");
    assert_int_equal(bytes_of(&s), 1000);
    add(&s, "a");
    add(&s, "hard_a");  /* the same inode by another name */
    add(&s, "./a");
    assert_int_equal(bytes_of(&s), 1000);
    add(&s, "b");
    assert_int_equal(bytes_of(&s), 1024);
    add(&s, "sub");     /* no regular file */
    add(&s, "missing"); /* nothing to count */
    assert_int_equal(bytes_of(&s), 1024);
    assert_int_equal(files_in(&s), 2);
    /* counted at first sight: a file that grows later does not recount */
    write_file("a", 5000);
    add(&s, "a");
    assert_int_equal(bytes_of(&s), 1024);
    dlg_file_set_fini(&s);

    unlink(link_a);
    rmdir(sub);
    char b[256];
    snprintf(b, sizeof b, "%s/b", dir);
    unlink(a);
    unlink(b);
    rmdir(dir);
}

static void grows(void **state)
{
    (void)state;
    dlg_file_set s;
    dlg_file_set_init(&s);
    for (uint64_t i = 1; i <= 100000; i++) /* two devices, inodes that collide in a small table */
        assert_true(dlg_file_set_add(&s, (dlg_file_key){i & 1, (i >> 1) + 1}, 3));
    for (uint64_t i = 1; i <= 100000; i++)
        assert_false(dlg_file_set_add(&s, (dlg_file_key){i & 1, (i >> 1) + 1}, 3));
    assert_false(dlg_file_set_add(&s, (dlg_file_key){5, 0}, 3)); /* inode 0: no file */
    assert_int_equal(bytes_of(&s), 300000);
    /* every shard at most half full, and the keys spread over all of them
     * (a shard pick that left some idle would grow the others' tables, and
     * stall their opens, as one table did) */
    size_t most = 0, least = SIZE_MAX;
    for (int i = 0; i < DLG_FILE_SET_SHARDS; i++) {
        const dlg_file_shard *sh = &s.shards[i];
        assert_true(sh->cap >= 2 * sh->n);
        most = sh->n > most ? sh->n : most;
        least = sh->n < least ? sh->n : least;
    }
    assert_int_equal(files_in(&s), 100000);
    size_t mean = 100000 / DLG_FILE_SET_SHARDS;
    assert_true(least > mean * 3 / 4 && most < mean * 5 / 4);
    dlg_file_set_fini(&s);
}

typedef struct adder {
    dlg_file_set *s;
    uint64_t first;
    int added;
} adder;

/* 20,000 keys from first on: the four threads' ranges overlap by half */
static void *add_range(void *p)
{
    adder *a = p;
    for (uint64_t i = a->first; i < a->first + 20000; i++)
        a->added += dlg_file_set_add(a->s, (dlg_file_key){7, i}, 1);
    return NULL;
}

static void threads(void **state)
{
    (void)state;
    dlg_file_set s;
    dlg_file_set_init(&s);
    pthread_t t[4];
    adder a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (adder){&s, 1 + (uint64_t)i * 10000, 0};
        assert_int_equal(pthread_create(&t[i], NULL, add_range, &a[i]), 0);
    }
    int added = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        added += a[i].added;
    }
    assert_int_equal(added, 50000); /* keys 1 .. 50000, each by one thread */
    assert_int_equal(bytes_of(&s), 50000);
    dlg_file_set_fini(&s);
}

/* Outputs kept: by name, at their size when the bytes are asked for (a
 * pass renamed into place is a new inode under the same name), a folder
 * as its regular files, a file also read once, a name gone as nothing. */
static void kept(void **state)
{
    (void)state;
    char top[] = "/tmp/dlg_file_kept_XXXXXX", in[256], out[256], db[256], data[256], lock[256], hidden[256];
    assert_non_null(mkdtemp(top));
    put(top, "in", 1000, in, sizeof in);
    put(top, "out", 500, out, sizeof out);
    snprintf(db, sizeof db, "%s/db", top);
    assert_int_equal(mkdir(db, 0700), 0);
    put(db, "data.mdb", 300, data, sizeof data);
    put(db, "lock.mdb", 20, lock, sizeof lock);
    put(db, ".hidden", 7, hidden, sizeof hidden);

    dlg_file_set s;
    dlg_file_set_init(&s);
    dlg_file_set_add_path(&s, in);
    dlg_file_set_keep(&s, out);
    assert_int_equal(bytes_of(&s), 1500);
    dlg_file_set_keep(&s, out); /* the same name: once */
    assert_int_equal(bytes_of(&s), 1500);
    /* the next pass: a new file renamed over the name, larger */
    char part[256];
    put(top, "out.part", 700, part, sizeof part);
    assert_int_equal(rename(part, out), 0);
    assert_int_equal(bytes_of(&s), 1700);
    dlg_file_set_keep(&s, db); /* a folder: its files */
    assert_int_equal(bytes_of(&s), 2020);
    dlg_file_set_keep(&s, in); /* read already: counted there */
    assert_int_equal(bytes_of(&s), 2020);
    unlink(data);
    assert_int_equal(bytes_of(&s), 1720);
    dlg_file_set_fini(&s);

    unlink(lock);
    unlink(hidden);
    rmdir(db);
    unlink(out);
    unlink(in);
    rmdir(top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths),
        cmocka_unit_test(grows),
        cmocka_unit_test(threads),
        cmocka_unit_test(kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
