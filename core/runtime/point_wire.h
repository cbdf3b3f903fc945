/* Points across a pipe: a cell's child process sends its progress and
 * result points to the parent, which owns the sinks.  A frame is
 * "DLGP", u32 length, then the point (strings as u32 length + bytes). */
#ifndef DLG_POINT_WIRE_H
#define DLG_POINT_WIRE_H

#include <dlgauge/plugin.h>

#include <stdbool.h>

#define DLG_WIRE_MAX_ITEMS 256
#define DLG_WIRE_MAX_FRAME (1u << 22) /* bytes after a frame's header: 4 MiB */

/* A decoded point that owns its strings; fields may be appended. */
typedef struct dlg_wire_point {
    dlg_point point;
    dlg_tag tags[DLG_WIRE_MAX_ITEMS];
    dlg_field fields[DLG_WIRE_MAX_ITEMS];
    char *arena;      /* every string of the point */
    size_t used, cap;
} dlg_wire_point;

/* Writes one frame to fd (whole, retrying short writes).  0 or -errno.
 * The receiver refuses a frame past the limits above as broken, so they
 * hold here, where the cell can say so (dlg_wire_fit). */
int dlg_wire_send(int fd, const dlg_point *p);
/* p as it may be sent: *out is p with its fields copied to fields[] (room
 * for DLG_WIRE_MAX_ITEMS), less its largest string fields while the frame
 * is over DLG_WIRE_MAX_FRAME, each named on stderr with the workload
 * (measured figures are kept).  -EMSGSIZE, after one line on stderr, for
 * more than DLG_WIRE_MAX_ITEMS tags or fields, or tags past the limit. */
int dlg_wire_fit(const dlg_point *p, dlg_field *fields, dlg_point *out);
/* Reads one frame.  1 = a point, 0 = end of stream, -1 = broken frame,
 * -ENOMEM = no memory for this frame's point, which was read past (the
 * next frame is read whole). */
int dlg_wire_recv(int fd, dlg_wire_point *out);
void dlg_wire_point_free(dlg_wire_point *wp);
/* Moves src into dst (the point's arrays live inside the struct, so a
 * plain struct copy would leave dst pointing into src). */
void dlg_wire_point_move(dlg_wire_point *dst, dlg_wire_point *src);

/* Builds an empty owned point (for results the parent writes itself). */
int dlg_wire_point_init(dlg_wire_point *wp, const char *measurement, int64_t time_ns);
/* Adds (or replaces) a tag / field, copying strings; keeps tags sorted. */
int dlg_wire_set_tag(dlg_wire_point *wp, const char *key, const char *value);
int dlg_wire_add_field(dlg_wire_point *wp, const dlg_field *f);
const dlg_field *dlg_wire_field(const dlg_wire_point *wp, const char *key);

#endif
