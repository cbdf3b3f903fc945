/* A group's cells by coordinate: an open-addressed hash of cell indices,
 * so that finding a cell costs one probe or a few instead of a scan of
 * every cell (a scan per row made a 200 x 200 sweep take seconds). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static size_t coord_hash(const size_t *coord, size_t naxes)
{
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (size_t a = 0; a < naxes; a++) {
        h = (h ^ (uint64_t)coord[a]) * 0xbf58476d1ce4e5b9u;
        h ^= h >> 31;
    }
    return (size_t)h;
}

/* The slot holding the cell at coord, or the empty one where it would go
 * (the table is never full: at most half its slots are used). */
static size_t slot_of(const rep_group *g, const size_t *coord)
{
    size_t mask = g->index_cap - 1, s = coord_hash(coord, g->naxes) & mask;
    while (g->index[s] >= 0 && memcmp(g->cells[g->index[s]].coord, coord, g->naxes * sizeof *coord) != 0)
        s = (s + 1) & mask;
    return s;
}

long rep_group_find(const rep_group *g, const size_t *coord)
{
    return g->index_cap ? g->index[slot_of(g, coord)] : -1;
}

/* A table of cap slots (a power of two) holding the group's cells. */
static int rehash(rep_group *g, size_t cap)
{
    long *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    for (size_t s = 0; s < cap; s++)
        slots[s] = -1;
    free(g->index);
    g->index = slots;
    g->index_cap = cap;
    for (size_t c = 0; c < g->ncells; c++)
        g->index[slot_of(g, g->cells[c].coord)] = (long)c;
    return 0;
}

int rep_group_index_last(rep_group *g)
{
    if (2 * g->ncells > g->index_cap) /* grown as cells are added, one at a time */
        return rehash(g, g->index_cap ? 2 * g->index_cap : 32);
    g->index[slot_of(g, g->cells[g->ncells - 1].coord)] = (long)(g->ncells - 1);
    return 0;
}
