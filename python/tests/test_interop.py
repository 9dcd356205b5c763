"""DLPack with PyTorch, when it is installed (the peers' venv has it; CI's venv does not):
tensors are borrowed in, results go out without copies."""
import numpy as np
import pytest

import hedra as hd

torch = pytest.importorskip("torch")


def test_torch_tensor_is_borrowed():
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    a = hd.array(t)
    t[0, 0] = 7
    assert hd.compute(a + 0)[0, 0] == 7


def test_results_go_to_torch_without_copies():
    a = hd.array(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = hd.compute(a * 2)
    assert torch.from_dlpack(y).data_ptr() == y.ctypes.data
    assert torch.equal(torch.from_dlpack(a * 3), torch.arange(6, dtype=torch.float32).reshape(2, 3) * 3)
