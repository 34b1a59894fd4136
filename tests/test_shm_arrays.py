"""A call's arrays through shared memory between a process and its device
processes (xlac.runtime.shm_arrays), and a one-device mesh run in process."""
import ml_dtypes
import numpy as np

import xlac
from xlac.runtime.shm_arrays import Mailbox, MailboxReader, Placed


def test_every_kind_of_argument_arrives_as_it_was_put():
    box, reader = Mailbox("xlac_test"), MailboxReader()
    try:
        arrays = [np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2],       # not contiguous
                  np.array([1.5, -2], ml_dtypes.bfloat16), np.array(True), np.int64(7),
                  np.zeros((0, 3), np.int8), None, np.array([1 + 2j], np.complex64)]
        placed = box.put(arrays)
        got = reader.views(placed)
        assert got[5] is None
        for a, g in zip(arrays, got):
            if a is not None:
                assert g.dtype == np.asarray(a).dtype and g.shape == np.shape(a)
                np.testing.assert_array_equal(g, a)
        # The results go the other way: into the owner's box, copied out there.
        back = reader.put(placed.name, box.capacity, [g * 2 for g in got if g is not None and g.dtype != bool])
        assert isinstance(back, Placed)
        out = box.get(back)
        np.testing.assert_array_equal(out[0], arrays[0] * 2)
    finally:
        reader.close()
        box.close()



def test_a_device_s_views_have_numpy_s_own_dtypes_so_calls_take_the_fast_path():
    """The descriptor of a placed array crosses processes pickled (a copy);
    the views carry numpy's own descriptor of the type (a big-endian one
    stays as it is), so an executable's native fast path takes them."""
    import pickle
    box, reader = Mailbox("xlac_test"), MailboxReader()
    try:
        arrays = [np.arange(8, dtype=np.float32), np.array([1.5, -2], ml_dtypes.bfloat16),
                  np.arange(3, dtype=">i4")]
        placed = pickle.loads(pickle.dumps(box.put(arrays)))
        got = reader.views(placed)
        assert got[0].dtype is np.dtype(np.float32) and got[1].dtype is np.dtype(ml_dtypes.bfloat16)
        assert got[2].dtype == np.dtype(">i4")
        np.testing.assert_array_equal(got[2], arrays[2])
        b = xlac.XlaBuilder("neg")
        exe = xlac.jit(b.build(xlac.ops.neg(xlac.ops.parameter(b, 0, xlac.shape("f32[8]"), "x"))))
        before = exe.fast_calls
        np.testing.assert_array_equal(exe(got[0]), -arrays[0])
        assert exe.fast_calls == before + 1
    finally:
        reader.close()
        box.close()

def test_an_immutable_array_passed_again_at_its_place_is_not_copied_again():
    """A keyed array (a jax buffer: its bytes never change while it lives)
    at the place its key had in the previous put stays as it is; anything
    else is copied: no key, another key, another place, another size, a
    grown box, after ``forget``."""
    box, reader = Mailbox("xlac_test"), MailboxReader()
    try:
        w, x, key = np.ones(8, np.float32), np.zeros(4, np.float32), object()
        box.put([w, x], [key, None])
        w[:] = 5                               # (only to see whether the box was written)
        x[:] = 7
        got = reader.views(box.put([w, x], [key, None]))
        np.testing.assert_array_equal(got[0], 1)           # kept: the same key at the same place
        np.testing.assert_array_equal(got[1], 7)           # no key: copied
        np.testing.assert_array_equal(reader.views(box.put([w, x], [object(), None]))[0], 5)   # another key
        w[:] = 6
        key = object()
        box.put([w], [key])
        w[:] = 8
        np.testing.assert_array_equal(reader.views(box.put([x, w], [None, key]))[1], 8)   # another place
        box.put([w], [key])
        w[:] = 9
        box.forget()
        np.testing.assert_array_equal(reader.views(box.put([w], [key]))[0], 9)
        shorter = w[:4].copy()
        box.put([shorter], [key])
        np.testing.assert_array_equal(reader.views(box.put([w], [key]))[0], 9)              # another size
        box.put([w], [key])
        w[:] = 3
        placed = box.put([np.zeros(1 << 18), w], [None, key])                                # grown
        np.testing.assert_array_equal(reader.views(placed)[1], 3)
    finally:
        reader.close()
        box.close()


def test_a_mailbox_grows_under_a_new_name_and_the_reader_follows():
    box, reader = Mailbox("xlac_test"), MailboxReader()
    try:
        first = box.put([np.ones(4, np.float32)])
        np.testing.assert_array_equal(reader.views(first)[0], 1)
        big = np.arange(1 << 18, dtype=np.float64)
        second = box.put([big])
        assert second.name != first.name
        np.testing.assert_array_equal(reader.views(second)[0], big)
        # What does not fit the box it is given is refused (sent in the message instead).
        assert reader.put(second.name, 16, [big]) is None
    finally:
        reader.close()
        box.close()


def test_a_program_on_a_one_device_mesh_runs_in_this_process():
    text = """HloModule f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=1]>}}

ENTRY main {
  x = f32[4,3]{1,0} parameter(0), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"d\\"}, {}]>"}
  ROOT t = f32[4,3]{1,0} tanh(x)
}
"""
    exe = xlac.jit(text)
    assert isinstance(exe, xlac.Executable)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_allclose(exe(x), np.tanh(x), rtol=1e-6)
