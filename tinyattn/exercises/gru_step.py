"""Exercise: the backward of one GRU step (Cho et al. 2014), with PyTorch's equations.

    gh = h W_hh^T + b_hh                 the hidden projection, gates stacked r | z | n
    r = sigmoid(gi_r + gh_r)             reset gate
    z = sigmoid(gi_z + gh_z)             update gate
    n = tanh(gi_n + r * gh_n)            candidate state
    h' = (1 - z) * n + z * h

gi = x W_ih^T + b_ih comes in already computed (a sequence layer does all steps in one product).
Shapes: gi (B, 3H), h (B, H), w_hh (3H, H), b_hh (3H,) -> h' (B, H).
Copy this file, write backward, and check it:
    python -m tinyattn.exercises check gru_step my_gru_step.py
Afterwards, compare with class GRUStep in tinyattn/nn/fused/recurrent_steps.py.
"""
import numpy as np

import tinyattn as ta


def sigmoid(a):
    return 1 / (1 + np.exp(-a))


class GRUStep(ta.autograd.Function):
    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh):
        gh = h @ w_hh.T + b_hh
        i_r, i_z, i_n = np.split(gi, 3, axis=1)
        h_r, h_z, h_n = np.split(gh, 3, axis=1)
        r = sigmoid(i_r + h_r)
        z = sigmoid(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        ctx.save_for_backward(h, w_hh, r, z, n, h_n)
        return (1 - z) * n + z * h

    @staticmethod
    def backward(ctx, grad):
        h, w_hh, r, z, n, h_n = ctx.saved_tensors
        # grad is dL/dh' (B, H). Return (dL/dgi, dL/dh, dL/dw_hh, dL/db_hh).
        # Step 1. h' = (1 - z) n + z h: dL/dz = grad (h - n), dL/dn = grad (1 - z), and h gets grad z
        #         directly (add the path through gh later).
        # Step 2. Through the nonlinearities: sigmoid' = s (1 - s), tanh' = 1 - tanh^2. Call the
        #         results dr, dz, dn_pre (the gradients of the three pre-activations).
        # Step 3. n_pre = i_n + r * h_n: dr also collects dn_pre * h_n (before its sigmoid'), and
        #         dL/dh_n = dn_pre * r.
        # Step 4. dL/dgi = [dr, dz, dn_pre] and dL/dgh = [dr, dz, dn_pre * r], joined on axis 1.
        # Step 5. gh = h W_hh^T + b_hh: dL/dh += dL/dgh W_hh, dL/dW_hh = dL/dgh^T h, and dL/db_hh
        #         sums dL/dgh over the batch (the bias was broadcast over it).
        raise NotImplementedError("write the backward of the GRU step (the steps are in the comments above)")
