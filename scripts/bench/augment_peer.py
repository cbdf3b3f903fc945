#!/usr/bin/env python3
"""OpenCV's side of augment-vs-opencv.sh: the two OpenCV stages of MXNet's
default augmenter on the image aug_bench wrote, one thread, timed REPS times
each (medians), and dlgauge's outputs compared with OpenCV's byte for byte.

  augment_peer.py OUTDIR REPS    prints "key value" lines
  augment_peer.py --about        OpenCV's version and the ISA it runs with
"""
import re
import sys
import time

import cv2
import numpy as np

# cv::checkHardwareSupport ids (opencv2/core/cvdef.h); cv2 exports no names
CPU_IDS = {"sse4_1": 6, "avx": 10, "avx2": 11, "fma3": 12, "avx512_skx": 256}


def about():
    info = cv2.getBuildInformation()
    base = re.search(r"Baseline:\s*(.*)", info)
    disp = re.search(r"Dispatched code generation:\s*(.*)", info)
    have = [k for k, v in CPU_IDS.items() if cv2.checkHardwareSupport(v)]
    print(f"opencv {cv2.__version__}: baseline {base.group(1).strip() if base else '?'}, "
          f"dispatched {disp.group(1).strip() if disp else '?'}; this CPU: {' '.join(have) or 'none'}; "
          f"threads {cv2.getNumThreads()}")


def read_ppm(path):
    data = open(path, "rb").read()
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    w, h = int(m.group(1)), int(m.group(2))
    return np.frombuffer(data, np.uint8, w * h * 3, m.end()).reshape(h, w, 3)


def median_us(fn, reps):
    fn()  # warm-up: buffers, dispatch
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)) * 1e6


def diff(a, b):
    d = np.abs(a.astype(np.int16) - b.astype(np.int16))
    return int(d.max()), int((d > 0).sum())


def main():
    cv2.setNumThreads(1)
    if sys.argv[1:] == ["--about"]:
        return about()
    out, reps = sys.argv[1], int(sys.argv[2])
    p = {l.split()[0]: l.split()[1:] for l in open(f"{out}/params.txt")}
    img = read_ppm(f"{out}/in.ppm")
    nw, nh = map(int, p["out"])
    fill = int(p["fill"][0])
    m = np.array([float(v) for v in p["matrix"]], np.float32).reshape(2, 3)  # MXNet's CV_32F
    warped = np.empty((nh, nw, 3), np.uint8)
    warp = lambda: cv2.warpAffine(img, m, (nw, nh), dst=warped, flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=(fill, fill, fill))
    print(f"warp_us {median_us(warp, reps):.1f}")
    cx, cy, c = map(int, p["crop"])
    crop = np.ascontiguousarray(img[cy:cy + c, cx:cx + c])
    hls, back = np.empty_like(crop), np.empty_like(crop)
    to_hls = lambda: cv2.cvtColor(crop, cv2.COLOR_RGB2HLS, dst=hls)
    to_rgb = lambda: cv2.cvtColor(hls, cv2.COLOR_HLS2RGB, dst=back)
    print(f"hls_us {median_us(to_hls, reps) + median_us(to_rgb, reps):.1f}")
    # MXNet's shift and clamp (a scalar loop over the bytes in MXNet; here a
    # lookup table): timed apart, not in hls_us
    shift = [int(v) for v in p["shift"]]
    lut = np.empty((256, 1, 3), np.uint8)
    for k, lim in enumerate((180, 255, 255)):
        lut[:, 0, k] = np.clip(np.arange(256) + shift[k], 0, lim)
    cv2.cvtColor(crop, cv2.COLOR_RGB2HLS, dst=hls)
    shifted = np.empty_like(hls)
    print(f"shift_us {median_us(lambda: cv2.LUT(hls, lut, dst=shifted), reps):.1f}")
    cv2.cvtColor(shifted, cv2.COLOR_HLS2RGB, dst=back)
    warp()
    print("warp_diff %d %d" % diff(warped, read_ppm(f"{out}/warp.ppm")))
    print("hls_diff %d %d" % diff(back, read_ppm(f"{out}/hls.ppm")))


if __name__ == "__main__":
    main()
