"""Malformed task: a syntax error."""

import torch

def get_inputs(:
    return [torch.randn(4)]
