"""Dynamic dimensions through the ops XLA's DynamicPadder handles beyond the
elementwise and reduction ones: sort (the padding sorts last), reduce-window
(windows inside the valid elements), reshapes that split a dynamic dimension
into dimensions whose dynamic one is not the major-most, gather and scatter
(conditional and while: test_dynamic_control.py).  Every case runs in the
evaluator (valid elements only) and in compiled code (padded, optimised and
not) against hand-computed values."""
import numpy as np
import pytest

import xlac
from test_dynamic import check_all

S32_COMPUTATIONS = """
add_s32 { a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b) }
add_f32 { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b) }
lt_s32 { a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT }
gt_s32_f32 { a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT }
"""


def module(body: str, extra: str = "") -> str:
    return "HloModule m\n" + S32_COMPUTATIONS + extra + "ENTRY e {\n" + body + "\n}\n"


# -----------------------------------------------------------------------------------
# sort: the valid elements sorted, the padding after them
# -----------------------------------------------------------------------------------

SORT = module("""x = s32[3,6] parameter(0)
  y = f32[3,6] parameter(1)
  n = s32[] parameter(2)
  d = s32[3,<=6] set-dimension-size(x, n), dimensions={1}
  s = (s32[3,<=6], f32[3,<=6]) sort(d, y), dimensions={1}, to_apply=gt_s32_f32
  k = s32[3,<=6] get-tuple-element(s), index=0
  v = f32[3,<=6] get-tuple-element(s), index=1
  one = s32[3,<=6] sort(d), dimensions={1}, to_apply=lt_s32
  ROOT t = (s32[3,<=6], f32[3,<=6], s32[3,<=6]) tuple(k, v, one)""")


@pytest.mark.parametrize("n", [0, 1, 4, 6])
def test_sort_of_a_dynamic_dimension_sorts_the_valid_elements(n):
    x = np.array([[3, -1, 7, 0, -9, 5], [2, 2, -3, 8, -9, 9], [0, 1, 0, 1, -100, 100]], np.int32)
    y = np.arange(18, dtype=np.float32).reshape(3, 6)
    order = np.argsort(-x[:, :n], axis=1, kind="stable")
    check_all(SORT, [x, y, np.int32(n)],
              (np.take_along_axis(x[:, :n], order, 1), np.take_along_axis(y[:, :n], order, 1),
               np.sort(x[:, :n], axis=1)))


def test_sort_along_a_static_dimension_of_a_dynamic_operand():
    text = module("""x = s32[5,3] parameter(0)
  n = s32[] parameter(1)
  d = s32[<=5,3] set-dimension-size(x, n), dimensions={0}
  ROOT s = s32[<=5,3] sort(d), dimensions={1}, to_apply=lt_s32""")
    x = np.array([[3, 1, 2], [9, -1, 0], [5, 5, 4], [7, 8, 6], [0, 0, 0]], np.int32)
    check_all(text, [x, np.int32(3)], np.sort(x[:3], axis=1))


# -----------------------------------------------------------------------------------
# reduce-window: max(size - extent + stride, 0) // stride windows, all valid
# -----------------------------------------------------------------------------------

REDUCE_WINDOW = module("""x = f32[4,9] parameter(0)
  n = s32[] parameter(1)
  d = f32[4,<=9] set-dimension-size(x, n), dimensions={1}
  z = f32[] constant(1)
  a = f32[3,<=4] reduce-window(d, z), window={size=2x3 stride=1x2}, to_apply=add_f32
  b = f32[4,<=7] reduce-window(d, z), window={size=1x2 rhs_dilate=1x2}, to_apply=add_f32
  c = f32[4,<=9] reduce-window(d, z), window={size=1x1}, to_apply=add_f32
  ROOT t = (f32[3,<=4], f32[4,<=7], f32[4,<=9]) tuple(a, b, c)""")


def _windows(x, size, stride, dilation, init):
    """Reference: a 1-D reduce-window of every row (sum plus init)."""
    extent = (size - 1) * dilation + 1
    count = max(x.shape[1] - extent + stride, 0) // stride
    cols = [x[:, k * stride: k * stride + extent: dilation].sum(1) + init for k in range(count)]
    return np.stack(cols, 1) if cols else np.zeros((x.shape[0], 0), x.dtype)


@pytest.mark.parametrize("n", [0, 2, 3, 4, 9])
def test_reduce_window_over_a_dynamic_dimension(n):
    x = np.arange(36, dtype=np.float32).reshape(4, 9)
    x[:, n:] = np.nan                         # past the size: never read
    v = x[:, :n]
    rows = v[:-1] + v[1:]                     # the window's 2 rows, stride 1
    check_all(REDUCE_WINDOW, [x, np.int32(n)],
              (_windows(rows, 3, 2, 1, 1), _windows(v, 2, 1, 2, 1), v + 1))


def test_variadic_reduce_window_keeps_the_size_under_a_trivial_window():
    text = module("""x = f32[4,5] parameter(0)
  y = s32[4,5] parameter(1)
  n = s32[] parameter(2)
  dx = f32[4,<=5] set-dimension-size(x, n), dimensions={1}
  dy = s32[4,<=5] set-dimension-size(y, n), dimensions={1}
  zf = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[4,<=5], s32[4,<=5]) reduce-window(dx, dy, zf, zi), window={size=1x1}, to_apply=pair""",
                  """pair { a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  t = s32[] add(b, d)
  ROOT r = (f32[], s32[]) tuple(s, t) }
""")
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    y = np.arange(20, dtype=np.int32).reshape(4, 5)
    check_all(text, [x, y, np.int32(3)], (x[:, :3], y[:, :3]))


# -----------------------------------------------------------------------------------
# reshape splitting a dynamic dimension into dimensions whose dynamic one is minor
# -----------------------------------------------------------------------------------

SPLITS = {
    "vector into its middle": ("s32[12]", "s32[<=12]", 0, "s32[2,<=3,2]", 1, 8, (2, 2, 2)),
    "minor into its minor": ("s32[2,6]", "s32[2,<=6]", 1, "s32[2,2,<=3]", 2, 4, (2, 2, 2)),
    "major with a static minor": ("s32[6,2]", "s32[<=6,2]", 0, "s32[2,<=3,2]", 1, 4, (2, 2, 2)),
    "declared without inferred_dimension": ("s32[2,6]", "s32[2,<=6]", 1, "s32[2,2,<=3]", None, 2, (2, 2, 1)),
    "minor dynamic into the major": ("s32[4,8]", "s32[4,<=8]", 1, "s32[<=8,4]", None, 6, (6, 4)),
}


@pytest.mark.parametrize("case", sorted(SPLITS))
def test_reshape_splitting_a_dynamic_dimension(case):
    static, dyn, dim, result, inferred, n, want_shape = SPLITS[case]
    attr = f", inferred_dimension={inferred}" if inferred is not None else ""
    text = module(f"""x = {static} parameter(0)
  n = s32[] parameter(1)
  d = {dyn} set-dimension-size(x, n), dimensions={{{dim}}}
  ROOT r = {result} reshape(d){attr}""")
    dims = xlac.shape(static).dimensions
    x = np.arange(np.prod(dims), dtype=np.int32).reshape(dims)
    valid = x[tuple(slice(0, n) if k == dim else slice(None) for k in range(x.ndim))]
    check_all(text, [x, np.int32(n)], valid.reshape(want_shape))


def test_reshape_split_then_reduce_reads_only_valid_elements():
    # The split's padding lies between valid rows: a reduce over it must skip it.
    text = module("""x = s32[12] parameter(0)
  n = s32[] parameter(1)
  d = s32[<=12] set-dimension-size(x, n), dimensions={0}
  r = s32[2,<=3,2] reshape(d), inferred_dimension=1
  z = s32[] constant(0)
  ROOT s = s32[2,2] reduce(r, z), dimensions={1}, to_apply=add_s32""")
    x = np.arange(12, dtype=np.int32)
    check_all(text, [x, np.int32(8)], np.array([[2, 4], [10, 12]], np.int32))


# -----------------------------------------------------------------------------------
# gather: a dynamic dimension sliced whole or one element (clamped to the valid ones);
# dynamic index batch dimensions pass to the result
# -----------------------------------------------------------------------------------

def test_gather_of_a_whole_dynamic_dimension_keeps_its_size():
    text = module("""x = s32[3,2,1] parameter(0)
  n = s32[] parameter(1)
  d = s32[3,<=2,1] set-dimension-size(x, n), dimensions={1}
  i = s32[] constant(1)
  ROOT g = s32[<=2,1] gather(d, i), offset_dims={0,1}, collapsed_slice_dims={0}, start_index_map={0},
      index_vector_dim=0, slice_sizes={1,2,1}""")
    x = np.array([[[1], [2]], [[3], [4]], [[5], [6]]], np.int32)
    for n in (0, 1, 2):
        check_all(text, [x, np.int32(n)], x[1, :n])


@pytest.mark.parametrize("rows, count", [(3, 3), (6, 4), (1, 2), (4, 0)])
def test_gather_rows_of_a_dynamic_operand_by_dynamic_indices(rows, count):
    text = module("""x = f32[6,2] parameter(0)
  i = s32[4] parameter(1)
  n = s32[] parameter(2)
  m = s32[] parameter(3)
  d = f32[<=6,2] set-dimension-size(x, n), dimensions={0}
  di = s32[<=4] set-dimension-size(i, m), dimensions={0}
  ROOT g = f32[<=4,2] gather(d, di), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
      index_vector_dim=1, slice_sizes={1,2}""")
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    i = np.array([0, 5, -2, 3], np.int32)          # past the valid rows: clamped into them
    want = x[np.clip(i[:count], 0, rows - 1)]
    check_all(text, [x, i, np.int32(rows), np.int32(count)], want)


def test_gather_of_part_of_a_dynamic_dimension_is_refused_by_name():
    text = module("""x = f32[6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=6] set-dimension-size(x, n), dimensions={0}
  i = s32[1] constant({1})
  ROOT g = f32[3] gather(d, i), offset_dims={0}, collapsed_slice_dims={}, start_index_map={0},
      index_vector_dim=0, slice_sizes={3}""")
    with pytest.raises(xlac.UnsupportedError, match="gather of a dynamic shape.*takes 3 of its bound 6"):
        xlac.jit(text)


# -----------------------------------------------------------------------------------
# scatter: the result keeps the operand's sizes; padded updates and windows past the
# valid elements are not scattered
# -----------------------------------------------------------------------------------

SCATTER_ROWS = module("""x = f32[3,3] parameter(0)
  i = s32[2] parameter(1)
  u = f32[2,3] parameter(2)
  n = s32[] parameter(3)
  di = s32[<=2] set-dimension-size(i, n), dimensions={0}
  du = f32[<=2,3] set-dimension-size(u, n), dimensions={0}
  ROOT s = f32[3,3] scatter(x, di, du), to_apply=add_f32, update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1""")


@pytest.mark.parametrize("n", [0, 1, 2])
def test_scatter_with_dynamic_indices_and_updates_scatters_the_valid_ones(n):
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    i = np.array([0, 2], np.int32)
    u = np.array([[10, 20, 30], [70, 80, 90]], np.float32)
    want = x.copy()
    for k in range(n):
        want[i[k]] += u[k]
    check_all(SCATTER_ROWS, [x, i, u, np.int32(n)], want)


def test_scatter_with_only_the_indices_dynamic_drops_the_padded_updates():
    text = module("""x = s32[5] parameter(0)
  i = s32[4] parameter(1)
  u = s32[4] parameter(2)
  n = s32[] parameter(3)
  di = s32[<=4] set-dimension-size(i, n), dimensions={0}
  ROOT s = s32[5] scatter(x, di, u), to_apply=add_s32, update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1""")
    x = np.zeros(5, np.int32)
    i, u = np.array([4, 1, 1, 0], np.int32), np.array([1, 2, 3, 4], np.int32)
    check_all(text, [x, i, u, np.int32(3)], np.array([0, 5, 0, 0, 1], np.int32))


def test_scatter_into_a_dynamic_operand_keeps_its_size_and_skips_windows_past_it():
    text = module("""x = s32[8] parameter(0)
  i = s32[4,1] parameter(1)
  u = s32[4,2] parameter(2)
  n = s32[] parameter(3)
  d = s32[<=8] set-dimension-size(x, n), dimensions={0}
  ROOT s = s32[<=8] scatter(d, i, u), to_apply=add_s32, update_window_dims={1},
      inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1""")
    x = np.arange(8, dtype=np.int32)
    i = np.array([[0], [3], [4], [6]], np.int32)
    u = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int32) * 100
    # size 5: the windows at 0 and 3 fit, the one at 4 reaches past the size, 6 is past it
    check_all(text, [x, i, u, np.int32(5)], np.array([100, 201, 2, 303, 404], np.int32))


def test_scatter_whose_update_window_covers_a_dynamic_operand_dimension():
    text = module("""x = s32[1,2,3] parameter(0)
  i = s32[1] parameter(1)
  u = s32[2,3,1] parameter(2)
  n = s32[] parameter(3)
  d = s32[1,<=2,3] set-dimension-size(x, n), dimensions={1}
  du = s32[<=2,3,1] set-dimension-size(u, n), dimensions={0}
  ROOT s = s32[1,<=2,3] scatter(d, i, du), to_apply=add_s32, update_window_dims={0,1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1""")
    x = np.ones((1, 2, 3), np.int32)
    u = np.array([[[10], [20], [30]], [[70], [80], [90]]], np.int32)
    for n in (1, 2):
        check_all(text, [x, np.zeros(1, np.int32), u, np.int32(n)], 1 + u[:n, :, 0][None])
