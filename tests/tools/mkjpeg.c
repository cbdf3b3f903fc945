/* mkjpeg ROOT CLASSES PER_CLASS SEED: test images for the CLI tests. */
#include <stdio.h>
#include <stdlib.h>

#include "jpeg_fixture.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: mkjpeg ROOT CLASSES PER_CLASS SEED\n");
        return 2;
    }
    if (fx_make_images(argv[1], atoi(argv[2]), atoi(argv[3]), strtoull(argv[4], NULL, 10)) != 0) {
        fprintf(stderr, "mkjpeg: cannot write images under %s\n", argv[1]);
        return 1;
    }
    return 0;
}
