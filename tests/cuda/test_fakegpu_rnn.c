/* The stand-in cuDNN RNN (fakegpu/fake_cudnn_rnn.cc) stays as strict on
 * half data as on fp32: an input or output that overlaps the workspace
 * reads or ends as NaN (the workspace is NaN around every call), and a
 * data or state descriptor of another type than the RNN's is BAD_PARAM.
 * Called directly, one small LSTM (T 2, B 2, I 3, H 4), both types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda_runtime.h>
#include <cudnn.h>

#include <stdbool.h>
#include <string.h>

enum { T = 2, B = 2, I = 3, H = 4 };

typedef struct rnn {
    cudnnDataType_t dt;
    size_t es; /* bytes of an element */
    cudnnHandle_t dnn;
    cudnnDropoutDescriptor_t drop;
    cudnnRNNDescriptor_t rnn;
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd;
    int32_t *seq;
    void *w, *ws;
    size_t wbytes, work, reserve;
} rnn;

static cudnnRNNDataDescriptor_t data_desc(cudnnDataType_t dt, int vec)
{
    int len[B] = {T, T};
    cudnnRNNDataDescriptor_t d;
    assert_int_equal(cudnnCreateRNNDataDescriptor(&d), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnSetRNNDataDescriptor(d, dt, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, B,
                                               vec, len, NULL),
                     CUDNN_STATUS_SUCCESS);
    return d;
}

static cudnnTensorDescriptor_t state_desc(cudnnDataType_t dt)
{
    int dims[3] = {1, B, H}, strides[3] = {B * H, H, 1};
    cudnnTensorDescriptor_t d;
    assert_int_equal(cudnnCreateTensorDescriptor(&d), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnSetTensorNdDescriptor(d, dt, 3, dims, strides), CUDNN_STATUS_SUCCESS);
    return d;
}

/* An inference LSTM of data type dt with zero weights, and its workspace. */
static rnn make(cudnnDataType_t dt)
{
    rnn r = {.dt = dt, .es = dt == CUDNN_DATA_HALF ? 2 : 4};
    assert_int_equal(cudnnCreate(&r.dnn), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnCreateDropoutDescriptor(&r.drop), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnSetDropoutDescriptor(r.drop, r.dnn, 0.0f, NULL, 0, 0),
                     CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnCreateRNNDescriptor(&r.rnn), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnSetRNNDescriptor_v8(r.rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM,
                                              CUDNN_RNN_SINGLE_INP_BIAS, CUDNN_UNIDIRECTIONAL,
                                              CUDNN_LINEAR_INPUT, dt, CUDNN_DATA_FLOAT,
                                              CUDNN_DEFAULT_MATH, I, H, H, 1, r.drop,
                                              CUDNN_RNN_PADDED_IO_DISABLED),
                     CUDNN_STATUS_SUCCESS);
    r.xd = data_desc(dt, I);
    r.yd = data_desc(dt, H);
    r.hd = state_desc(dt);
    int32_t len[B] = {T, T};
    assert_int_equal(cudaMalloc((void **)&r.seq, sizeof len), cudaSuccess);
    memcpy(r.seq, len, sizeof len); /* the stand-in's device memory is the host's */
    assert_int_equal(cudnnGetRNNWeightSpaceSize(r.dnn, r.rnn, &r.wbytes), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudnnGetRNNTempSpaceSizes(r.dnn, r.rnn, CUDNN_FWD_MODE_INFERENCE, r.xd,
                                               &r.work, &r.reserve),
                     CUDNN_STATUS_SUCCESS);
    assert_true(r.work >= (size_t)T * B * H * r.es);
    assert_int_equal(cudaMalloc(&r.w, r.wbytes), cudaSuccess);
    assert_int_equal(cudaMalloc(&r.ws, r.work), cudaSuccess);
    memset(r.w, 0, r.wbytes);
    return r;
}

static void destroy(rnn *r)
{
    cudaFree(r->seq);
    cudaFree(r->w);
    cudaFree(r->ws);
    cudnnDestroyTensorDescriptor(r->hd);
    cudnnDestroyRNNDataDescriptor(r->xd);
    cudnnDestroyRNNDataDescriptor(r->yd);
    cudnnDestroyRNNDescriptor(r->rnn);
    cudnnDestroyDropoutDescriptor(r->drop);
    cudnnDestroy(r->dnn);
}

/* n elements of 0.5 */
static void fill(const rnn *r, void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (r->dt == CUDNN_DATA_HALF)
            ((uint16_t *)p)[i] = 0x3800; /* 0.5 in fp16 */
        else
            ((float *)p)[i] = 0.5f;
}

static bool all_nan(const rnn *r, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bool nan;
        if (r->dt == CUDNN_DATA_HALF) {
            uint16_t v = ((const uint16_t *)p)[i];
            nan = (v & 0x7c00) == 0x7c00 && (v & 0x3ff);
        } else {
            float v = ((const float *)p)[i];
            nan = v != v;
        }
        if (!nan)
            return false;
    }
    return true;
}

static cudnnStatus_t forward(rnn *r, cudnnRNNDataDescriptor_t xd, const void *x, void *y,
                             cudnnTensorDescriptor_t hd)
{
    return cudnnRNNForward(r->dnn, r->rnn, CUDNN_FWD_MODE_INFERENCE, r->seq, xd, x, r->yd, y, hd,
                           NULL, NULL, hd, NULL, NULL, r->wbytes, r->w, r->work, r->ws, 0, NULL);
}

/* x at the workspace's start: cuDNN may use that memory before it reads
 * x, so the stand-in's y is NaN; x elsewhere: finite (zero weights) */
static void input_in_workspace(cudnnDataType_t dt)
{
    rnn r = make(dt);
    size_t nx = (size_t)T * B * I, ny = (size_t)T * B * H;
    void *x, *y;
    assert_int_equal(cudaMalloc(&x, nx * r.es), cudaSuccess);
    assert_int_equal(cudaMalloc(&y, ny * r.es), cudaSuccess);
    fill(&r, x, nx);
    assert_int_equal(forward(&r, r.xd, x, y, r.hd), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudaStreamSynchronize(NULL), cudaSuccess);
    assert_false(all_nan(&r, y, ny));
    fill(&r, r.ws, nx);
    assert_int_equal(forward(&r, r.xd, r.ws, y, r.hd), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudaStreamSynchronize(NULL), cudaSuccess);
    if (!all_nan(&r, y, ny))
        fail_msg("%s: x in the workspace gave finite outputs",
                 dt == CUDNN_DATA_HALF ? "half" : "float");
    cudaFree(x);
    cudaFree(y);
    destroy(&r);
}

/* y at the workspace's start: cuDNN may reuse that memory after writing
 * y, so the stand-in leaves it NaN */
static void output_in_workspace(cudnnDataType_t dt)
{
    rnn r = make(dt);
    size_t nx = (size_t)T * B * I, ny = (size_t)T * B * H;
    void *x;
    assert_int_equal(cudaMalloc(&x, nx * r.es), cudaSuccess);
    fill(&r, x, nx);
    assert_int_equal(forward(&r, r.xd, x, r.ws, r.hd), CUDNN_STATUS_SUCCESS);
    assert_int_equal(cudaStreamSynchronize(NULL), cudaSuccess);
    if (!all_nan(&r, r.ws, ny))
        fail_msg("%s: y in the workspace kept its values",
                 dt == CUDNN_DATA_HALF ? "half" : "float");
    cudaFree(x);
    destroy(&r);
}

static void test_workspace_overlap_float(void **st)
{
    input_in_workspace(CUDNN_DATA_FLOAT);
    output_in_workspace(CUDNN_DATA_FLOAT);
}

static void test_workspace_overlap_half(void **st)
{
    input_in_workspace(CUDNN_DATA_HALF);
    output_in_workspace(CUDNN_DATA_HALF);
}

/* x, y or the states described with a type other than the RNN's */
static void test_type_mismatch(void **st)
{
    for (int k = 0; k < 2; k++) {
        cudnnDataType_t dt = k ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        cudnnDataType_t other = k ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
        rnn r = make(dt);
        void *x, *y;
        assert_int_equal(cudaMalloc(&x, (size_t)T * B * I * 4), cudaSuccess);
        assert_int_equal(cudaMalloc(&y, (size_t)T * B * H * 4), cudaSuccess);
        cudnnRNNDataDescriptor_t xo = data_desc(other, I);
        cudnnTensorDescriptor_t ho = state_desc(other);
        assert_int_equal(forward(&r, r.xd, x, y, r.hd), CUDNN_STATUS_SUCCESS);
        assert_int_equal(forward(&r, xo, x, y, r.hd), CUDNN_STATUS_BAD_PARAM);
        assert_int_equal(forward(&r, r.xd, x, y, ho), CUDNN_STATUS_BAD_PARAM);
        assert_int_equal(cudaStreamSynchronize(NULL), cudaSuccess);
        cudnnDestroyRNNDataDescriptor(xo);
        cudnnDestroyTensorDescriptor(ho);
        cudaFree(x);
        cudaFree(y);
        destroy(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_workspace_overlap_float),
                                       cmocka_unit_test(test_workspace_overlap_half),
                                       cmocka_unit_test(test_type_mismatch)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
