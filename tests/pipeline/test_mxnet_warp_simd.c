/* The warps' vector kernels (loader_warp_avx2.c: nearest and bilinear
 * blocks of 8 outputs, lanczos4's 64 taps of a pixel; cubic's SSE2 one in
 * loader_cubic.c): a source wide enough that they run, against bytes
 * OpenCV 4.6 (Debian's python3-opencv) produced once, and every method's
 * reads kept inside src by pages that may not be read on either side. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "loader_affine.h"
#include "cv_pattern.h"


/* cv2.warpAffine(pattern 20x12, M, (20, 12), flags=m, BORDER_CONSTANT, 40)
 * with M = getRotationMatrix2D((9.5, 5.5), 20, 0.9) in float32, as hex:
 * wide enough that whole blocks of 8 outputs (nearest, bilinear) and
 * pixels with all 64 lanczos4 taps inside take the vector kernels. */
static const char wide_nearest[] =
    "282828282828282828282828282828282828282828282828282828e1fe1b24415e6784a1"
    "e3001d33506d83a0bd33506d90adca6784a1282828282828282828282828282828282828"
    "2828282828282828285b78959ebbd8f3102d43607d93b0cd1c39567996b329466393b0cd"
    "fd1a37e1fe1b2828282828282828282828282828282828284f6c8992afccb3d0ed03203d"
    "53708da8c5e205223f627f9ceb082555728f7c99b6f3102d6a87a45b7895282828282828"
    "28282886a3c0c9e6030c294613304d63809d91aecbee0b284b6885adcae7173451819ebb"
    "1734518eabc84b6885cfec0953708d44617ed5f20f282828001d3ad3f00d23405d7390ad"
    "7a97b4d7f41105223f6f8ca943607db2cfec294663bfdcf943607dc7e40191aecb223f5c"
    "b3d0edb1ceeb4f6c8928282883a0bd63809dc0ddfac7e401314e6b9bb8d5d6f3104d6a87"
    "c4e1fe33506db7d4f14d6a87defb186f8ca9395673d7f4117592af1e3b58c9e603282828"
    "28282889a6c3f3102d718eabe805225f7c99a7c4e12b4865afcce92b4865bcd9f65f7c99"
    "fd1a379bb8d5728fac1d3a57c8e502d3f00d8ba8c5bddaf72828280c294683a0bd97b4d1"
    "1b38559fbcd9e704217895b209264385a2bf23405dc6e3001c3956c7e401abc8e563809d"
    "6e8ba833506df815323754712828288facc913304d34516ec5e2ff567390abc8e5496683"
    "c5e2ff708daa1b3855cbe80583a0bd3b58751f3c59e4011eef0c29c1defb93b0cd282828"
    "282828282828122f4c33506dd1ee0b6f8ca96f8ca91a3754a3c0dd5b789513304dd0ed0a"
    "95b2cf5a77944b68851d3a5728282828282828282828282828282828282895b2cfc3e0fd"
    "6e8ba81936537b98b533506dbcd9f6819ebb46638003203dd5f20f282828282828282828"
    "28282828282828282828282828282828282818355253708d0b28456d8aa7324f6cf71431"
    "8daac75f7c99314e6b282828282828282828282828282828282828282828282828282828";
static const char wide_linear[] =
    "2828282828282828282828282828282828282828282828283f4448899a232c47628191ae"
    "bf39564e6b82a0bd5e5e7b7db766836e4152282828282828282828282828282828282828"
    "28282835382f47552e3c556d87a4c1d5845f754a6791aecb614a677693b0829f4885a2bd"
    "d43956b3cf482828282828282828282828282828281e29344a607595b2b3a1be79163350"
    "6683a08d8fac2643609789a69f4b687e9bb8577491b94f6ca07b6695b25e384144282828"
    "272f37526579adca4c728f7743607d526f808daac7d326435c6376a5c2df1d3a578fa8c5"
    "3d34518eab95425f65b7d226819e937f9c5593a72128282834516296b33b405d7a63809d"
    "97b4878eab4b415e7ba2bb6489a6737e9bb8627f9c809dba65829f819e316d8a94395672"
    "6b88a590adca66837a2828284a61786e8b74acc5e275923b425f6e8aa7c48ca924577491"
    "abc8e54966839dbad768857eb9d64e587592617e59a8c5546e8b6d4b6885789542475135"
    "303c47995f7caf4764a57f60b0465c7e59768aa78f4f6c8983a0bd45627fa6c3e065829f"
    "ed2a3faac28a627f9c2f4c5b769330bbd83899829f798fa628282827415e76809dab708d"
    "36526f7f89a6a83b585a6d8a814e6b5f7c9968858697b48145627f917133bb8d958494b1"
    "5976934b6873b3415e69799628282864778b4764815e7b98a9c6e1496683aa94b1486582"
    "d079966f8ca923404dc0dd1a7996b35a57746b304dbc3653c17a97adcae7617487333b43"
    "282828242c3453708d728f6aa0bd5353708d8daac753516ea685a27592af25425f9ebb18"
    "a3c0a57390ad4b688523394e701e292828282828282828282828282828286884a09bb8d5"
    "617e9b7390ad7b98b57b405dc092af708daa2d4a674c692eaac35b5a68752d3033282828"
    "2828282828282828282828282828282828283e4f617390ad3c4b6886a3c0486582ce4865"
    "a4b4d1617c972f3f4f21272c282828282828282828282828282828282828282828282828";
static const char wide_cubic[] =
    "28282828282828282828282828282828272829262524211e3c41448cb71c1c37648da2c2"
    "e228462f7494c5de523b6f89dd6d8c633358221f1c282828282828282828282828292824"
    "201d1835372d48551b2c45708eb3edff92586b3b5893d8f4573a577594c387a3297cb2cf"
    "de2249beeb3e1d1c292828282726251e1b17282828111b28556b83a4c3c6b6da76001e3d"
    "6592ac9792b4082a47ba9ab7ab304d86b9d737659ed447699770669fc96a303849242326"
    "1d253452669dcae84783a37b2b497d405d6c90bef0e7133a565b6eadc9e71b385592abc8"
    "302846a0bba1234253c6e21779aeb0769438adc10b1c192433566ba9c71d223f7b5471bc"
    "b2cf8ca3bf31123882bad36388b661829fc15d7a978ba5d45574b28ba8086e8bb5294667"
    "6c89aca1bee35c7b88282828495f895f9575c2deff77961d2d5c6d87a4dd94b0054d6a96"
    "b5d2ff3e5b77aac7e55c8070cff5433a61af5b783fc5e24d6b886f28459b7da029464f26"
    "263a44b75e82b82456b28d57b83e5474427493c09843618289acc8395572b1cef25781aa"
    "fa1d33aed5905f7c991a375a7c9913d8f82ca685bd79a4ca2828281a36556f92aec97494"
    "26436080a1bdbf1b3b44728f8a35524e85a1648180a6cd88294a97976a05d7a4a88faec8"
    "3b66a62d646fc622467389ab24211e7a8ea23d58754672a7b7d4f0295574b99ebb396582"
    "e979966f8ca91e3b49cfec057393c6504a6d671c3ddc1f3cee8dacafe9ff6183972a3941"
    "2726251d242c52729769864abbd84a334d7cabc9e6342b48b88ba878a4c10b2862a7c400"
    "afccb083a1c74d719004425872101b2828281c191626252428282822201e728eaaa5c2df"
    "5875a17995b17b9cb9772b48d6a4c16e8ba81b3a6748681cc6df5a5b69832d2f312a2420"
    "222a282828282828282828282828282a27243242537eb0ce1a2845a2c3e0296d8af13452"
    "b2d4f4627d992d3e4e21262c18152a1e1c19282828282828282828282828282828282828";
static const char wide_lanczos4[] =
    "28282826252828282829292b2d2f3225252a26252423201e3b404380bd1c1b326696a2bb"
    "ea2d452075a2dedb4228658bf976855524612916122c332c29292b31322d2929262e2b26"
    "19161133362a5154152d43728db5f4ff9b5a702b4880eaff5b374e7590c595a81771aed2"
    "d11048c0ff3d1a1b2c2c2b282c2a2016120d2828280a14215f7580a7c5c6b4de72001933"
    "639fb69a85af001d38d7a7cd9c22338bcbea1d4ba2ea596d815f63a8d871283052211f22"
    "121b2f5065b3cfed4690b2772a4988344e5387bcfff11a40515567accbed21355393aebc"
    "2f2241a3bea11e4442c9e41777b6c874881bb7cb0d19162d3d5f6eadbd1216307a4d69d2"
    "cbe093a9b823002692d1e97078af4b829ec8597996919dd05073c88ca2007292cc27446d"
    "73809b9fc0ed5f7c8f282828435485569a76c4e8ff7c9f0c265969869ae093ae004e6c9d"
    "bac8ff3d5a77acc7e4527c66e0ff511d46c0637833d9fa5967867211269c77a315515518"
    "26464cbb5876b00c46aa9462be5054773f6f93d0a13e61848db4be385474b4cdee5987b6"
    "f4162da4dc906d7b8f1b335582a113e0ff35aa83c96d9fd1282828183856678eadd88094"
    "2440607babc9cb1b3f376e839b37593a859f727476b1e68b1639aa9b6a00daa9ab94c9c6"
    "2d59ac28626cbd103b7c91a81e1f1c8898ac48546f3a77bdbbcce8274b6fbb98b3356f8f"
    "ee78966b89a91f3e49d9f2006791ca574562650d3dde173bf894aca3eeff6d8a901e3944"
    "272523141c24567ba757732ecfee5a11306cc2ddf6241431b68cae78b7c40b2164a1be05"
    "b2d4b27e97cd4e728a014e65710913282828141010291f1d2a2a2b1f1d1e7491aba7b5d2"
    "4d6a9a839db77c9fbc7c2844d3a0bc7b899d133878486814cce55a516486302e2f2e1c18"
    "212f2d2b292a2f3233292a2b282a2b33302c2834488ecae70e192cb2d1e8236d8aff3857"
    "a8e0ff6076952f404e21262c17142a1a1712272727292c2d282829262828262525282828";

static void test_warp_wide_known_answers(void **st)
{
    (void)st;
    enum { W = 20, H = 12 };
    const dlg_affine fwd = {{0.845723331, 0.307818115, -0.227371618, -0.307818115, 0.845723331,
                             3.77279377}};
    static const int methods[4] = {0, 1, 2, 4};
    static const char *const hex[4] = {wide_nearest, wide_linear, wide_cubic, wide_lanczos4};
    dlg_affine inv;
    dlg_affine_invert(&fwd, &inv);
    uint8_t in[W * H * 3], out[W * H * 3], want[W * H * 3];
    cv_pattern(in, W, H);
    dlg_rgb8 src = {in, W, H, W * 3}, dst = {out, W, H, W * 3};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(strlen(hex[i]), 2 * sizeof want);
        for (size_t k = 0; k < sizeof want; k++) {
            unsigned v;
            assert_int_equal(sscanf(hex[i] + 2 * k, "%2x", &v), 1);
            want[k] = (uint8_t)v;
        }
        memset(out, 0xee, sizeof out);
        dlg_warp_rgb(&src, &dst, &inv, 40, cv_interp_code(methods[i], true));
        cv_same_bytes(out, want, sizeof out, "20x12 rotation by 20 degrees, scale 0.9", methods[i]);
    }
}

/* Every method reads src's bytes only: src lies against a page that may
 * not be read, first after its last byte, then before its first (a read
 * past either end stops the test).  The identity warps and a rotation put
 * whole blocks of 8 outputs on the last pixels; the resizes grow and
 * shrink.  The nearest identity warp is a copy. */
static void test_reads_stay_in_src(void **st)
{
    (void)st;
    enum { W = 24, H = 12, N = W * H * 3 }; /* rows of whole blocks of 8 */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map, page, PROT_NONE), 0);
    assert_int_equal(mprotect(map + 2 * page, page, PROT_NONE), 0);
    const dlg_affine id = {{1, 0, 0, 0, 1, 0}};
    const dlg_affine fwd = {{0.845723331, 0.307818115, -0.227371618, -0.307818115, 0.845723331,
                             3.77279377}};
    dlg_affine turn;
    dlg_affine_invert(&fwd, &turn);
    static uint8_t out[(W + 3) * (H + 2) * 3];
    uint8_t *const at[2] = {map + 2 * page - N, map + page};
    for (int e = 0; e < 2; e++) {
        cv_pattern(at[e], W, H);
        dlg_rgb8 src = {at[e], W, H, W * 3}, same = {out, W, H, W * 3};
        dlg_rgb8 big = {out, W + 3, H + 2, (W + 3) * 3}, small = {out, W - 3, H - 2, (W - 3) * 3};
        for (int m = 0; m < 5; m++) {
            dlg_warp_rgb(&src, &same, &id, 40, cv_interp_code(m, true));
            if (m == 0)
                assert_memory_equal(out, at[e], N);
            dlg_warp_rgb(&src, &same, &id, -1, cv_interp_code(m, true));
            dlg_warp_rgb(&src, &same, &turn, 40, cv_interp_code(m, true));
            dlg_resize_rgb(&src, &big, cv_interp_code(m, false));
            dlg_resize_rgb(&src, &small, cv_interp_code(m, false));
        }
    }
    assert_int_equal(munmap(map, 3 * page), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warp_wide_known_answers),
        cmocka_unit_test(test_reads_stay_in_src),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
