/* im2rec image records and .lst files; convert_imageset list files and the
 * ImageNet-style folder scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "listfile.h"
#include "recordio.h"
#include "tmpdir.h"

static void test_im2rec_multi_label(void **state)
{
    float labels[3] = {1.0f, 2.0f, 0.5f};
    dlg_im2rec_header h = {.flag = 3, .label = 0.0f, .id = 42, .id2 = 0};
    uint8_t buf[64];
    dlg_data_err err;
    assert_int_equal(dlg_im2rec_size(3, 3), 24 + 12 + 3);
    assert_int_equal(dlg_im2rec_pack(buf, sizeof buf, &h, labels, "IMG", 3, &err), 39);
    static const uint8_t want[] = {3, 0, 0, 0, 0, 0, 0, 0,                          /* flag, label */
                                   42, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* id, id2 */
                                   0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40,
                                   0x00, 0x00, 0x00, 0x3f, 'I', 'M', 'G'};
    assert_memory_equal(buf, want, sizeof want);
    dlg_im2rec_view v;
    assert_int_equal(dlg_im2rec_unpack(buf, 39, "t.rec", 0, &v, &err), 0);
    assert_int_equal(v.h.flag, 3);
    assert_int_equal(v.h.id, 42);
    assert_int_equal(dlg_im2rec_nlabels(&v), 3);
    assert_true(dlg_im2rec_label(&v, 0) == 1.0f && dlg_im2rec_label(&v, 2) == 0.5f);
    assert_int_equal(v.image_len, 3);
    assert_memory_equal(v.image, "IMG", 3);
    assert_int_equal(dlg_im2rec_pack(buf, 38, &h, labels, "IMG", 3, &err), -DLG_EINVAL);
}

static void test_im2rec_single_label(void **state)
{
    dlg_im2rec_header h = {.flag = 0, .label = 5.0f, .id = 7, .id2 = 9};
    uint8_t buf[32];
    dlg_data_err err;
    assert_int_equal(dlg_im2rec_pack(buf, sizeof buf, &h, NULL, "JP", 2, &err), 26);
    static const uint8_t head[8] = {0, 0, 0, 0, 0x00, 0x00, 0xa0, 0x40};
    assert_memory_equal(buf, head, 8);
    assert_int_equal(buf[16], 9);
    dlg_im2rec_view v;
    assert_int_equal(dlg_im2rec_unpack(buf, 26, "t.rec", 0, &v, &err), 0);
    assert_int_equal(dlg_im2rec_nlabels(&v), 1);
    assert_true(dlg_im2rec_label(&v, 0) == 5.0f);
    assert_int_equal(v.h.id2, 9);
    assert_int_equal(v.image_len, 2);
    /* Corrupt: too short, and more labels than bytes. */
    assert_int_equal(dlg_im2rec_unpack(buf, 20, "t.rec", 64, &v, &err), -DLG_ECORRUPT);
    assert_string_equal(err.msg, "t.rec: record at byte 64 is 20 bytes, too short for the "
                                 "24-byte im2rec header");
    buf[0] = 1;
    assert_int_equal(dlg_im2rec_unpack(buf, 26, "t.rec", 8, &v, &err), -DLG_ECORRUPT);
    assert_string_equal(err.msg, "t.rec: record at byte 8 declares 1 labels (flag) but has only 2 "
                                 "bytes after the header");
}

static void test_lst(void **state)
{
    const char *text = "1\t0.5\t2\tdir/a b.jpg\n"
                       "\n"
                       "2\t3\t c.jpg \r\n"
                       "-3\t1e2\tnan\td/e.png";
    dlg_lst l;
    dlg_data_err err;
    assert_int_equal(dlg_lst_parse(&l, text, strlen(text), "t.lst", &err), 0);
    assert_int_equal(l.n, 3);
    assert_int_equal(l.items[0].index, 1);
    assert_string_equal(l.items[0].path, "dir/a b.jpg");
    assert_int_equal(l.items[0].nlabels, 2);
    assert_true(l.items[0].labels[0] == 0.5f && l.items[0].labels[1] == 2.0f);
    assert_string_equal(l.items[1].path, "c.jpg");
    assert_int_equal(l.items[1].nlabels, 1);
    assert_true(l.items[1].labels[0] == 3.0f);
    assert_int_equal(l.items[2].index, -3);
    assert_true(l.items[2].labels[0] == 100.0f);
    assert_true(l.items[2].labels[1] != l.items[2].labels[1]); /* NaN */
    dlg_lst_free(&l);

    struct { const char *text, *msg; } bad[] = {
        {"1\ta.jpg\n", "t.lst:1: expected 'index<TAB>label<TAB>path' (at least 3 tab-separated fields)"},
        {"1\t2\ta\nx\t2\ta\n", "t.lst:2: index 'x' is not an integer"},
        {"1\tfoo\ta.jpg\n", "t.lst:1: label 1 'foo' is not a number"},
        {"1\t2\t\t3\ta.jpg\n", "t.lst:1: label 2 '' is not a number"},
        /* finite as a double, infinite as the float32 im2rec packs */
        {"1\t2\t1e39\ta.jpg\n", "t.lst:1: label 2 '1e39' is outside the float32 range"},
        {"1\t-3.5e38\ta.jpg\n", "t.lst:1: label 1 '-3.5e38' is outside the float32 range"},
        /* im2rec.py strips the line first: the trailing blank is no empty field */
        {"1\t2\t \n", "t.lst:1: expected 'index<TAB>label<TAB>path' (at least 3 tab-separated fields)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(dlg_lst_parse(&l, bad[i].text, strlen(bad[i].text), "t.lst", &err),
                         -DLG_ECORRUPT);
        assert_string_equal(err.msg, bad[i].msg);
        assert_null(l.items);
    }
}

static void test_convert_imageset_list(void **state)
{
    const char *text = "n01440764/a b c.JPEG 3\n"
                       "x.jpg 0\r\n"
                       "\n"
                       "dir/y.png -12";
    dlg_filelist l;
    dlg_data_err err;
    assert_int_equal(dlg_filelist_parse(&l, text, strlen(text), "list.txt", &err), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.entries[0].path, "n01440764/a b c.JPEG");
    assert_int_equal(l.entries[0].label, 3);
    assert_string_equal(l.entries[1].path, "x.jpg");
    assert_int_equal(l.entries[1].label, 0);
    assert_string_equal(l.entries[2].path, "dir/y.png");
    assert_int_equal(l.entries[2].label, -12);
    assert_null(l.classes);
    dlg_filelist_free(&l);

    struct { const char *text, *msg; } bad[] = {
        {"a.jpg 1\nnospace\n", "list.txt:2: expected 'relative/path label' (no space found)"},
        {"a.jpg x1\n", "list.txt:1: label 'x1' is not an integer"},
        {" 5\n", "list.txt:1: empty path"},
        {"a.jpg\t1\n", "list.txt:1: expected 'relative/path label' (no space found; tab-separated "
                        "fields are im2rec's .lst format: name the file *.lst)"},
        {"a.jpg 99999999999\n", "list.txt:1: label '99999999999' is out of range (a label is an "
                                 "int32: -2147483648..2147483647)"},
        {"a.jpg -2147483649\n", "list.txt:1: label '-2147483649' is out of range (a label is an "
                                 "int32: -2147483648..2147483647)"},
        {"a.jpg 99999999999999999999999\n", "list.txt:1: label '99999999999999999999999' is out of "
                                            "range (a label is an int32: -2147483648..2147483647)"},
        {"a.jpg 1e3\n", "list.txt:1: label '1e3' is not an integer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(dlg_filelist_parse(&l, bad[i].text, strlen(bad[i].text), "list.txt", &err),
                         -DLG_ECORRUPT);
        assert_string_equal(err.msg, bad[i].msg);
    }
}

/* What Windows editors and scripts leave in real lists: a UTF-8 byte order
 * mark, trailing blanks, a trailing tab after the .lst path. */
static void test_list_quirks(void **state)
{
    const char *text = "\xEF\xBB\xBF" "a b.jpg 1 \r\n"
                       "c.jpg 2\t\n"
                       "/abs/d.jpg 3\n";
    dlg_filelist l;
    dlg_data_err err;
    assert_int_equal(dlg_filelist_parse(&l, text, strlen(text), "list.txt", &err), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.entries[0].path, "a b.jpg");
    assert_int_equal(l.entries[0].label, 1);
    assert_string_equal(l.entries[1].path, "c.jpg");
    assert_int_equal(l.entries[1].label, 2);
    assert_string_equal(l.entries[2].path, "/abs/d.jpg");
    dlg_filelist_free(&l);

    const char *lst = "\xEF\xBB\xBF" "0\t1\ta.jpg\t\n1\t2\tb c.jpg \r\n";
    dlg_lst m;
    assert_int_equal(dlg_lst_parse(&m, lst, strlen(lst), "t.lst", &err), 0);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.items[0].index, 0);
    assert_string_equal(m.items[0].path, "a.jpg");
    assert_int_equal(m.items[0].nlabels, 1);
    assert_string_equal(m.items[1].path, "b c.jpg");
    dlg_lst_free(&m);

    const char *idx = "\xEF\xBB\xBF" "0\t0\n1\t 16 \n";
    dlg_rec_idx x;
    assert_int_equal(dlg_rec_idx_parse(&x, idx, strlen(idx), "t.idx", 64, "t.rec", &err), 0);
    assert_int_equal(x.n, 2);
    assert_string_equal(x.entries[0].key, "0");
    assert_int_equal(x.entries[1].offset, 16);
    dlg_rec_idx_free(&x);
}

/* im2rec's .lst as a files: dataset's list: the first label is the class
 * ("3.000000" as im2rec.py writes it), a malformed line names file:line,
 * and a file named *.lst loads as one. */
static void test_lst_as_filelist(void **state)
{
    const char *text = "0\t3.000000\ttrain/c3/a.jpg\n\n"
                       "7\t1\t0.5\tb c.jpg\n";
    dlg_filelist l;
    dlg_data_err err;
    assert_int_equal(dlg_filelist_parse_lst(&l, text, strlen(text), "t.lst", &err), 0);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.entries[0].path, "train/c3/a.jpg");
    assert_int_equal(l.entries[0].label, 3);
    assert_string_equal(l.entries[1].path, "b c.jpg");
    assert_int_equal(l.entries[1].label, 1);
    assert_null(l.classes);
    dlg_filelist_free(&l);

    struct { const char *text, *msg; } bad[] = {
        {"0\t1\ta.jpg\n\n1\t2.5\tb.jpg\n", "t.lst:3: label 2.5 is not a class index (an integer)"},
        {"0\t1\ta.jpg\n1\t3e9\tb.jpg\n", "t.lst:2: label 3e+09 is not a class index (an integer)"},
        {"0\t1\ta.jpg\nb.jpg 1\n", "t.lst:2: expected 'index<TAB>label<TAB>path' (at least 3 tab-separated fields)"},
        {"0\tx\ta.jpg\n", "t.lst:1: label 1 'x' is not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(dlg_filelist_parse_lst(&l, bad[i].text, strlen(bad[i].text), "t.lst", &err),
                         -DLG_ECORRUPT);
        assert_string_equal(err.msg, bad[i].msg);
    }

    assert_true(dlg_filelist_is_lst("d/train.LST"));
    assert_false(dlg_filelist_is_lst("d/train.txt"));
    assert_false(dlg_filelist_is_lst("lst"));
    char dir[32], path[64];
    tmpdir_make(dir, "lstload");
    snprintf(path, sizeof path, "%s/train.lst", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("5\t4\timg.jpg\n", f);
    fclose(f);
    dlg_source src;
    assert_int_equal(dlg_source_open_path(&src, path, &err), 0);
    assert_int_equal(dlg_filelist_load(&l, &src, &err), 0);
    dlg_source_close_fd(&src);
    assert_int_equal(l.n, 1);
    assert_string_equal(l.entries[0].path, "img.jpg");
    assert_int_equal(l.entries[0].label, 4);
    dlg_filelist_free(&l);
    tmpdir_rmrf(dir);
}

static void touch(const char *root, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static void mk(const char *root, const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    assert_int_equal(mkdir(p, 0755), 0);
}

static void test_folder_scan(void **state)
{
    char root[] = "/tmp/dlg_scan_XXXXXX";
    assert_non_null(mkdtemp(root));
    mk(root, "b_cls");
    mk(root, "a_cls");
    mk(root, "a_cls/sub");
    mk(root, ".hidden");
    mk(root, "empty");
    touch(root, "b_cls/x.jpg");
    touch(root, "a_cls/y.jpeg");
    touch(root, "a_cls/sub/z.PNG");
    touch(root, "a_cls/notes.txt");
    touch(root, "a_cls/.tmp.jpg");
    touch(root, ".hidden/h.jpg");
    touch(root, "top.jpg");
    dlg_filelist l;
    dlg_data_err err;
    assert_int_equal(dlg_filelist_scan(&l, root, &err), 0);
    assert_int_equal(l.nclasses, 3);
    assert_string_equal(l.classes[0], "a_cls");
    assert_string_equal(l.classes[1], "b_cls");
    assert_string_equal(l.classes[2], "empty");
    assert_int_equal(l.n, 3);
    assert_string_equal(l.entries[0].path, "a_cls/sub/z.PNG");
    assert_int_equal(l.entries[0].label, 0);
    assert_string_equal(l.entries[1].path, "a_cls/y.jpeg");
    assert_int_equal(l.entries[1].label, 0);
    assert_string_equal(l.entries[2].path, "b_cls/x.jpg");
    assert_int_equal(l.entries[2].label, 1);
    dlg_filelist_free(&l);

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    assert_non_null(mkdtemp(strcpy(root, "/tmp/dlg_scan_XXXXXX")));
    assert_int_equal(dlg_filelist_scan(&l, root, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "no class folders"));
    mk(root, "c");
    touch(root, "c/readme.txt");
    assert_int_equal(dlg_filelist_scan(&l, root, &err), -DLG_EINVAL);
    assert_non_null(strstr(err.msg, "no images found in 1 class folders"));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_im2rec_multi_label), cmocka_unit_test(test_im2rec_single_label),
        cmocka_unit_test(test_lst),                cmocka_unit_test(test_convert_imageset_list),
        cmocka_unit_test(test_folder_scan),        cmocka_unit_test(test_list_quirks),
        cmocka_unit_test(test_lst_as_filelist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
