/* For tests of the OpenMP team a plan starts: libgomp reads its default
 * team (OMP_NUM_THREADS) once, when it is loaded, so a test sets it and
 * starts itself again; threads are counted in /proc/self/task. */
#ifndef DLG_TEST_OMP_TEAM_H
#define DLG_TEST_OMP_TEAM_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A default team larger than any a test asks for. */
#define DEFAULT_TEAM "4"

/* This process's threads. */
static inline int task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Returns where OMP_NUM_THREADS is DEFAULT_TEAM; else sets it and execs
 * this program again (returns only if that fails: 1 to exit with). */
static inline int with_default_team(char **argv)
{
    const char *t = getenv("OMP_NUM_THREADS");
    if (t && strcmp(t, DEFAULT_TEAM) == 0)
        return 0;
    setenv("OMP_NUM_THREADS", DEFAULT_TEAM, 1);
    execv("/proc/self/exe", argv);
    perror("execv /proc/self/exe");
    return 1;
}

#endif
