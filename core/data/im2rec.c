/* im2rec image record payloads: IRHeader (u32 flag, f32 label, u64 id,
 * u64 id2), then flag float32 labels, then the encoded image. */
#include "recordio.h"

#include <string.h>

int dlg_im2rec_unpack(const void *payload, size_t len, const char *name, uint64_t rec_off,
                      dlg_im2rec_view *v, dlg_data_err *err)
{
    const uint8_t *p = payload;
    if (len < DLG_IM2REC_HEADER_SIZE)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: record at byte %llu is %zu bytes, too short for the 24-byte "
                             "im2rec header",
                             name, (unsigned long long)rec_off, len);
    memcpy(&v->h.flag, p, 4);
    memcpy(&v->h.label, p + 4, 4);
    memcpy(&v->h.id, p + 8, 8);
    memcpy(&v->h.id2, p + 16, 8);
    uint64_t lab_bytes = (uint64_t)v->h.flag * 4;
    if (lab_bytes > len - DLG_IM2REC_HEADER_SIZE)
        return dlg_data_fail(err, DLG_ECORRUPT,
                             "%s: record at byte %llu declares %u labels (flag) but has only "
                             "%zu bytes after the header",
                             name, (unsigned long long)rec_off, v->h.flag,
                             len - DLG_IM2REC_HEADER_SIZE);
    v->labels = p + DLG_IM2REC_HEADER_SIZE;
    v->image = v->labels + lab_bytes;
    v->image_len = len - DLG_IM2REC_HEADER_SIZE - (size_t)lab_bytes;
    return 0;
}

size_t dlg_im2rec_nlabels(const dlg_im2rec_view *v) { return v->h.flag ? v->h.flag : 1; }

float dlg_im2rec_label(const dlg_im2rec_view *v, size_t i)
{
    if (v->h.flag == 0)
        return v->h.label;
    float f;
    memcpy(&f, v->labels + 4 * i, 4);
    return f;
}

size_t dlg_im2rec_size(uint32_t nlabels, size_t image_len)
{
    return DLG_IM2REC_HEADER_SIZE + (size_t)nlabels * 4 + image_len;
}

int64_t dlg_im2rec_pack(void *out, size_t cap, const dlg_im2rec_header *h, const float *labels,
                        const void *image, size_t image_len, dlg_data_err *err)
{
    size_t need = dlg_im2rec_size(h->flag, image_len);
    if (need > cap)
        return dlg_data_fail(err, DLG_EINVAL, "im2rec record needs %zu bytes, buffer has %zu",
                             need, cap);
    if (h->flag > 0 && !labels)
        return dlg_data_fail(err, DLG_EINVAL, "im2rec header has flag %u but no labels given",
                             h->flag);
    uint8_t *p = out;
    memcpy(p, &h->flag, 4);
    memcpy(p + 4, &h->label, 4);
    memcpy(p + 8, &h->id, 8);
    memcpy(p + 16, &h->id2, 8);
    if (h->flag > 0)
        memcpy(p + DLG_IM2REC_HEADER_SIZE, labels, (size_t)h->flag * 4);
    if (image_len > 0)
        memcpy(p + DLG_IM2REC_HEADER_SIZE + (size_t)h->flag * 4, image, image_len);
    return (int64_t)need;
}
