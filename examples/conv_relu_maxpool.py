"""A convolution layer, relu and 2x2 max pooling with xlac.jit and xlac.lax.

    python examples/conv_relu_maxpool.py

Images are NHWC, kernels HWIO, as in jax/flax; ``'SAME'`` padding keeps the
spatial size, the pooling window is 2x2 with stride 2.
"""
import numpy as np

import xlac
from xlac import lax


@xlac.jit
def conv_relu_maxpool(images, kernel, bias):
    y = lax.conv_general_dilated(images, kernel, (1, 1), "SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = lax.max(y + bias, 0.0)
    return lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def main(seed=0):
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((2, 8, 8, 3)).astype(np.float32)
    kernel = rng.standard_normal((3, 3, 3, 4)).astype(np.float32) / 3
    bias = rng.standard_normal(4).astype(np.float32) / 10
    return (images, kernel, bias), conv_relu_maxpool(images, kernel, bias)


if __name__ == "__main__":
    _, out = main()
    print("output", out.shape, out.dtype, "max", float(out.max()))
