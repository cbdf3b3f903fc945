"""What the PyTorch scripts' summaries share (cnn-vs-pytorch.sh,
mxnet-vs-pytorch.sh): which round is the median one."""


def median_round(secs):
    """The round whose time is the median of {round: seconds}: for an even
    count the lower middle one (the printed median is the mean of the two;
    a row's GFLOP/s, %peak and isa must come from a run that happened)."""
    order = sorted(secs, key=lambda r: (secs[r], r))
    return order[(len(order) - 1) // 2]
