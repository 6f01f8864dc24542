"""Every known way to fake a kernel benchmark has a fixture, and none of them passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

import conftest
from conftest import CANDIDATES, REPO, TASKS, gpu_eval


def cpu_eval(candidate: str, task="scale_add", **options):
    """conftest.cpu_eval without the torch.compile baseline unless asked: no trick here bears on it (the
    eager reference is timed beside the candidate either way), test_baselines is about it, and compiling
    each task's reference on the CPU took some 20 s apiece. Each stage may take 180 s, not 60: none of
    these fixtures hangs, and a C++ fixture's compile stage passed 60 s under CI's load (two of them at
    once, 2026-11-29)."""
    return conftest.cpu_eval(candidate, task, **{"compile_baseline": False, "timeout": 180.0, **options})

# fixture -> the statuses that are an acceptable rejection of it (never "passed")
CHEATS = {
    # (rejected where the second call of a trial, under the census, returns the first's cached result unlaunched)
    "cheat_output_cache_pointer": {"incorrect", "rejected"},
    "cheat_output_cache_value": {"incorrect", "rejected"},
    # (or crashed: written densely into a broadcast input, whose memory holds one element per row)
    "cheat_input_mutation": {"rejected", "crashed"},
    "cheat_lazy_subclass": {"rejected", "incorrect"},
    "cheat_background_thread": {"rejected"},
    "cheat_side_stream": {"rejected"},
    "cheat_timer_patch": {"rejected"},
    "cheat_hidden_clock": {"rejected"},
    "cheat_compare_patch": {"rejected", "incorrect"},
    "cheat_reference_memory": {"rejected", "incorrect"},
    "cheat_empty_output": {"incorrect"},
    "cheat_read_expected_file": {"rejected", "incorrect"},
    "cheat_phase_switch": {"incorrect"},
    "cheat_forged_stdout": {"crashed"},
    "cheat_forged_reply": {"rejected", "incorrect"},
    "cheat_precision_downgrade": {"incorrect"},
    "cheat_precision_cast_back": {"incorrect"},
    "cheat_pytorch_fallback": {"rejected"},
    "cheat_pytorch_only": {"rejected"},
    "cheat_unused_kernel": {"rejected"},
    "cheat_zeros": {"incorrect"},
    # these reach into the runner itself; the static check stops them first
    "cheat_zero_times": {"rejected"},
    "cheat_median_game": {"rejected"},
    "cheat_compressed_output": {"rejected"},
    "cheat_deep_json": {"rejected"},
    "cheat_payload_announce": {"rejected"},
    "cheat_command_pipe_flood": {"rejected"},
    "cheat_suppress_fallback": {"rejected"},
    "cheat_kill_reference": {"rejected"},
    "cheat_network_lookup": {"rejected"},
    "cheat_unix_socket": {"rejected"},
    # evaluator round 2 (red team of 2026-11): PyTorch does the work, clocks, the quiet side, overfitting
    "cheat_sdpa_token": {"rejected"},
    "cheat_token_softmax": {"rejected"},
    "cheat_torch_compile": {"rejected"},
    "cheat_pytorch_when_timed": {"rejected"},
    "cheat_dict_clock": {"rejected"},
    "cheat_busy_child": {"rejected"},
    "cheat_native_thread": {"rejected"},
    "cheat_strides_ignored": {"incorrect"},
    "cheat_softmax_no_max": {"incorrect"},
    "cheat_detects_forge": {"rejected"},
    "cheat_cache_junk": {"rejected"},
    # Red team, 2026-11-23 (static check on): each is caught by it; the runtime is tested below.
    "cheat_scaled_time_calls": {"rejected"},
    "cheat_clock_patched_everywhere": {"rejected"},
    "cheat_dispatch_key_guard_sdpa": {"rejected"},
    "cheat_disable_torch_dispatch": {"rejected"},
    "cheat_census_aware": {"rejected"},
    "cheat_hidden_compile_census_aware": {"rejected"},
    "cheat_nested_namespace_hog": {"rejected"},
    "cheat_softmax_max_from_zero": {"incorrect"},
    # Red team, round 3 (static check on): operator.attrgetter reaching torch._C
    "cheat_sample_ring_overflow": {"rejected"},
    "cheat_hidden_cummax_padded": {"rejected"},
    # Red team, round 4 (static check on): traceback's frames reach the runner's census
    "cheat_census_emptied_through_frames": {"rejected"},
    "cheat_short_lived_threads": {"rejected"},
    # Red team, round 5 (static check on): passed before
    "cheat_gemm_as_bmm": {"rejected"},
    "cheat_convolution_as_unfold_mm": {"rejected"},
    "cheat_output_buffer_reused": {"incorrect"},
    # Red team, round 6
    "cheat_right_only_in_the_small_dtype": {"incorrect"},
    "cheat_output_ring_of_buffers": {"incorrect"},
    "cheat_cheaper_harness_slow_clock": {"rejected"},
    "cheat_remapped_libtorch_code": {"rejected"},
    # Red team, round 10 (static check on): frames walked to the runner's harness, a Triton body calling
    # Python, PyTorch's kernel compiled in from its headers; scipy's BLAS from the base interpreter
    "cheat_harness_rewritten_through_frames": {"rejected"},
    "cheat_triton_share_forged_numpy_sums": {"rejected"},
    "cheat_triton_kernel_calls_numpy": {"rejected"},
    "cheat_aten_softmax_from_its_headers": {"rejected"},
    "cheat_base_interpreters_scipy_blas": {"rejected"},
    # Red team, round 12 (static check on): the command line read from Python and from C++
    "cheat_right_only_where_its_process_names_forge": {"rejected"},
    "cheat_replies_padded_with_junk": {"rejected"},
    "cheat_endless_exception_text": {"rejected"},
    # Red team, round 13 (static check on): wrong in real use, on inputs forge never made
    "cheat_rows_assumed_back_to_back": {"incorrect"},
    "cheat_softmax_nan_on_masked_rows": {"incorrect"},
    "cheat_gemm_mostly_in_the_library": {"rejected"},
    "cheat_weights_packed_at_construction": {"incorrect"},
    # Red team, round 14 (static check on): weights right after load_state_dict only; a square weight
    # transposed under the reference's name
    "cheat_weights_repacked_on_load": {"incorrect"},
    "cheat_weights_square_transposed_under_its_name": {"incorrect"},
    "cheat_python_run_through_pasted_names": {"rejected"},
    # Outside review, round 14: two LayerNorms that start equal kept as one
    "cheat_weights_two_norms_merged": {"incorrect"},
    # Red team, round 16 (static check on): NNPACK's softmax that libtorch_cpu exports; right only where
    # autograd is off
    "cheat_pytorch_carried_kernel": {"rejected"},
    "cheat_right_only_without_autograd": {"incorrect"},
    "cheat_source_decoded_at_run_time": {"rejected"},
    # Evaluator round 2 (2026-11-26, static check on): Python inside an interpreted Triton launch, beside
    # the kernel (the grid's callable) or inside it (a function passed in as a constexpr)
    "cheat_triton_grid_callable_runs_numpy": {"rejected"},
    "cheat_triton_body_calls_a_function_passed_in": {"runtime_error"},
    # ... and PyTorch's numeric settings switched for the whole process on import
    "cheat_numeric_settings_changed_on_import": {"rejected"},
    "cheat_rounding_left_upward": {"rejected"},
    "cheat_division_trap_left_enabled": {"rejected"},
    "cheat_autocast_left_on": {"rejected"},
    "cheat_global_forward_hook": {"rejected"},
    "cheat_backends_switched_off_on_import": {"rejected"},
    "cheat_process_state_left_changed": {"rejected"},
    "cheat_right_only_under_forges_module_name": {"incorrect"},
    "cheat_process_registries_left_changed": {"rejected"},
    "cheat_wrong_on_memory_of_pytorchs_allocator": {"incorrect"},
    # A review, 2026-12-01: a registry of the modules built, shared by every instance of a width
    "cheat_weights_of_the_latest_instance": {"incorrect"},
    "cheat_weights_of_the_first_instance": {"incorrect"},
    # and harm to the importing process: the generators seeded, registries and functions replaced, a shell in a flag
    "cheat_python_and_numpy_generators_seeded_each_call": {"rejected"},
    "cheat_torch_generator_seeded_at_import": {"rejected"},
    "cheat_import_system_and_folders_redirected": {"rejected"},
    "cheat_library_function_rebound": {"rejected"},
    "cheat_torch_load_deserializer_registered": {"rejected"},
    "cheat_environment_read_through_setdefault": {"rejected", "incorrect"},
    "cheat_build_flag_runs_a_shell_command": {"rejected"},
    "cheat_last_result_kept_for_the_same_tensor": {"incorrect", "rejected"},  # (._version: the static check, since review 47)
    "cheat_files_changed_at_import": {"rejected"},
    # A review, 2026-12-02: PyTorch's operators renamed around a token kernel, a GEMM allowed by the reference's
    # strided-layout fallback, PyTorch's registries changed in place, a kernel wrong from 9 to 64 threads and
    # one that tells the sandbox by pathlib
    "cheat_token_kernel_beside_pytorchs_rmsnorm": {"rejected"},
    "cheat_gemm_beside_a_fused_reference": {"rejected"},
    "cheat_library_registry_changed_in_place": {"rejected"},
    "cheat_wrong_between_9_and_64_threads": {"incorrect"},
    "cheat_right_only_where_the_cgroup_folder_is_empty": {"rejected"},
    "cheat_reseeds_each_call": {"rejected"},
    "cheat_rng_state_put_back_each_call": {"rejected"},
    # ... and a kernel that reads its input from the start of the tensor's storage
    "cheat_storage_read_from_its_start": {"incorrect"},
    "cheat_layout_ignored_in_its_own_dtype": {"incorrect"},
    "cheat_census_forged_through_logging_frames": {"rejected"},
    "cheat_numpy_beside_a_token_triton_launch": {"rejected"},
    "cheat_triton_global_rebound_by_its_grid": {"runtime_error"},
    # ... and one input's layout taken for all (caught since layouts differ between inputs in a trial)
    "cheat_one_inputs_layout_assumed_for_all": {"incorrect"},
    # ... and numpy run from the __add__ of the tuple the grid's callable returns, inside the launch
    "cheat_triton_grid_tuple_subclass_runs_numpy": {"runtime_error"},
    # ... and kernels right only where their process is forge's runner (its PID, its user)
    "cheat_right_only_as_pid_2": {"rejected"},
    "cheat_right_only_as_the_overflow_uid": {"rejected"},
    # ... and, with it off, forge's runner rebound from the candidate's process (census, timing, layouts,
    # the settings check)
    "cheat_verification_served_by_pytorch_through_the_runner": {"rejected"},
    "cheat_layouts_undone_through_the_runner": {"rejected"},
    "cheat_settings_check_silenced_through_the_runner": {"rejected"},
    # Evaluator round 2 (2026-11-27): a reduction right only at the runner's CPU thread count
    "cheat_right_only_at_its_thread_count": {"incorrect"},
    # ... and, from a fresh review (2026-11-27, static check on), an ordinary bug right in one chunk of
    # rows only, and a kernel wrong only under torch.inference_mode()
    "cheat_right_only_in_one_chunk": {"incorrect"},
    "cheat_wrong_under_inference_mode": {"incorrect"},
    # ... and kernels right only as forge's runner, told by its interpreter's flags, the owner of "/" or
    # getuid() from C++; a native thread made for a timer's notice
    "cheat_right_only_with_safe_path": {"rejected"},
    "cheat_right_only_where_root_is_the_overflow_uid": {"rejected"},
    "cheat_right_only_as_the_overflow_uid_from_cpp": {"rejected"},
    "cheat_thread_from_a_timers_notice": {"rejected"},
    # ... and a second fresh review's: numpy from a TorchFunctionMode's hook, inside an interpreted launch
    "cheat_numpy_from_a_torch_mode_in_a_launch": {"rejected"},
    # ... and weights kept packed until their version counter moves (the in-place step writes through .data)
    "cheat_weights_cached_by_version": {"incorrect", "rejected"},  # (._version: the static check, since review 47)
    # ... and a review with the static check off: right only under forge's census (a dispatch mode), weights
    # refreshed only under one, wrong off the main thread (all rejected by the static check's reading too)
    "cheat_right_only_under_the_census": {"rejected"},
    "cheat_weights_refreshed_only_under_a_dispatch_mode": {"rejected"},
    "cheat_wrong_off_the_main_thread": {"rejected"},
    "cheat_approximation_where_only_checksummed": {"rejected"},
    "cheat_numpy_outside_timed_blocks": {"rejected"},
    "cheat_weights_viewed_at_construction": {"incorrect"},
    "cheat_wrong_on_inputs_that_require_grad": {"incorrect"},
    "cheat_right_only_where_forges_modules_are_loaded": {"rejected"},
    # A fresh review, static check off (2026-11-29): forge's hosted timing loop made leaner in the candidate's
    # process, rebound, or as another harness swapped in through gc (own-code check on). Rebound with every
    # check off it passes at the kernel's own speed: its loop counts with its calls (test_timing's
    # test_a_leaner_loop_..., bench/leaner_loop.py)
    "cheat_harness_leaner_than_the_references": {"rejected"},
    "cheat_harness_swapped_in_through_gc": {"rejected"},
    # A fresh review, static check on (2026-11-29): the reference's windows slowed from the candidate's
    # namespaces through dnotify marks on its freezer folder, with the work moved out of the reported span
    # (the static check now reads its file probes: RUNTIME_ONLY shows the runtime's refusal)
    "cheat_reference_overhead_grown_by_dnotify": {"rejected", "runtime_error"},
    # A fresh review, static check on (2026-11-27): a code path only another shape takes, wrong on strides
    # and large inputs there (the variants ran at the base shape only); exact zeros left unwritten (no draw
    # held one); a ring of 256 outputs of its own (outputs were held across at most about 100 calls)
    "cheat_wrong_only_on_wider_rows": {"incorrect"},
    "cheat_zero_left_unwritten": {"incorrect"},
    "cheat_output_ring_of_256": {"incorrect"},
    # ... and a review with the static check off (own-code checks on): forge's layout helper's code swapped
    # in place, a harness method replaced on its instance alone; an ordinary channels-last path's bug
    "cheat_layouts_undone_by_a_code_swap": {"rejected"},
    "cheat_layouts_undone_on_the_harness_instance": {"rejected"},
    "cheat_channels_last_path_wrong": {"incorrect"},
    # ... and a short review (static check on): a row split across the threads where a batch has fewer rows
    # than threads, merged wrongly (the thread-count trial was at 3)
    "cheat_rows_split_below_the_thread_count": {"incorrect"},
    # ... and from the same review: a static accumulator row shared by every call, in a loop that releases
    # the GIL: wrong when two threads call at once (a trial now makes calls while another thread does)
    "cheat_shared_scratch_races_across_threads": {"incorrect"},
    # ... and a review (static check on, 2026-11-28): a plan cached on the module for the last shape seen
    # (two calls of other shapes at once: a wrong plan, out of bounds), a staging buffer shared by calls
    # on the strided path alone, rows split into equal chunks that drop the remainder (wrong at 2, 4 and 8
    # threads), and a Triton scan chained across programs that holds only in the interpreter's order
    "cheat_plan_cached_across_shapes": {"incorrect", "crashed"},
    "cheat_staging_shared_on_the_strided_path": {"incorrect"},
    "cheat_rows_split_dropping_the_remainder": {"incorrect"},
    "cheat_triton_programs_chained_in_order": {"incorrect"},
    # ... and a review of 2026-11-28 (static check on): a coarse path taken in evaluation mode or with frozen
    # weights (forge called models in training mode only); a blocked online softmax that gives NaN on left
    # padding as long as a block; a square input transposed in place and back (wrong on model(x, x)); the
    # runner's launch record read off the extension's wrapper (numpy's samples passed as the interpreter's);
    # getattr bound to another name (frames and PyTorch's dispatch-mode stack)
    "cheat_wrong_once_the_model_is_put_in_eval_mode": {"incorrect"},
    "cheat_wrong_once_its_weights_are_frozen": {"incorrect"},
    "cheat_online_softmax_nan_on_left_padded_rows": {"incorrect"},
    "cheat_input_borrowed_as_scratch_and_put_back": {"incorrect"},
    "cheat_interpreter_spans_forged_through_the_extension_wrapper": {"runtime_error"},
    "cheat_census_hidden_through_an_aliased_getattr": {"rejected"},
    # ... and a review of those changes: the coarse path only with both states at once (as served); the fast
    # path for inputs whose storage cannot resize (timed inputs' memory), which verified inputs now lie in too
    "cheat_wrong_only_when_served": {"incorrect"},
    "cheat_fast_path_for_storage_that_cannot_resize": {"incorrect"},
    # Review 47 (2026-12-02): print options, warnings filters and the C-level environment left changed at import
    "cheat_printing_warnings_and_c_environment_changed": {"rejected"},
    "cheat_generator_seeded_as_the_model_is_built": {"rejected"},
    "cheat_weights_assumed_row_major": {"incorrect"},
    # A review, 2026-12-04 (static check on): native code that reads the C-level environment, writes files
    # through C++ streams and seeds torch's generator from C++, in the user's process only
    "cheat_native_file_write_at_load": {"rejected"},
    "cheat_native_generator_seeded_in_the_users_process": {"rejected"},
    # ... and inputs forge never made (8 and 12 bytes off a 16-byte boundary, broadcast), and its build told
    # from a user's by a file probe at compile time and by the extension's own file
    "cheat_unaligned_path_wrong_at_8_and_12_bytes": {"incorrect"},
    "cheat_broadcast_rows_read_as_dense": {"incorrect", "crashed"},
    "cheat_right_only_where_forges_precompiled_header_lies": {"rejected"},
    "cheat_right_only_where_its_extension_is_built": {"rejected"},
}

# The task each fixture is written for, where it is not scale_add.
TASK_OF = {
    "cheat_token_kernel_beside_pytorchs_rmsnorm": REPO / "tasks" / "rmsnorm.py",
    "cheat_gemm_beside_a_fused_reference": REPO / "tasks" / "attention_sdpa.py",
    "cheat_library_registry_changed_in_place": REPO / "tasks" / "activation_gelu.py",
    "cheat_wrong_between_9_and_64_threads": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_where_the_cgroup_folder_is_empty": REPO / "tasks" / "activation_gelu.py",
    "cheat_verification_served_by_pytorch_through_the_runner": REPO / "tasks" / "activation_gelu.py",
    "cheat_layouts_undone_through_the_runner": REPO / "tasks" / "activation_gelu.py",
    "cheat_settings_check_silenced_through_the_runner": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_as_pid_2": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_as_the_overflow_uid": REPO / "tasks" / "activation_gelu.py",
    "cheat_triton_grid_tuple_subclass_runs_numpy": REPO / "tasks" / "cumsum_rows.py",
    "cheat_pool_layout_cache": "linear_relu",
    "cheat_sdpa_token": "naive_attention",
    "cheat_token_softmax": "softmax_small",
    "cheat_strides_ignored": "softmax_small",
    "cheat_softmax_no_max": "softmax_small",
    "cheat_scaled_time_calls": "softmax_small",
    "cheat_clock_patched_everywhere": "softmax_small",
    "cheat_lazy_fault_output": "softmax_small",
    "cheat_dispatch_key_guard_sdpa": "naive_attention",
    "cheat_disable_torch_dispatch": "softmax_small",
    "cheat_census_aware": "softmax_small",
    "cheat_hidden_compile_census_aware": "softmax_small",
    "cheat_token_mask_kernel": "naive_attention",
    "cheat_nested_namespace_hog": "softmax_small",
    "cheat_softmax_max_from_zero": "softmax_small",
    "cheat_reduction_as_gemm": REPO / "tasks" / "sum_dim.py",  # the bundled task
    "cheat_sample_ring_overflow": "softmax_wide",
    "cheat_sample_ring_overflow_cummax": "slow_running_max",
    "cheat_hidden_cummax_padded": "slow_running_max",
    "cheat_hidden_cummax_slow_probe": "slow_running_max",
    "cheat_reordered_attention": "naive_attention",
    "honest_cpp_running_max": "slow_running_max",
    "cheat_hidden_aten_slow_probe": REPO / "tasks" / "softmax_rows.py",
    "cheat_census_emptied_through_frames": REPO / "tasks" / "softmax_rows.py",
    "cheat_numpy_does_the_work": REPO / "tasks" / "softmax_rows.py",
    "cheat_fifo_in_place_of_its_extension": REPO / "tasks" / "softmax_rows.py",
    "cheat_read_root_only_files": REPO / "tasks" / "softmax_rows.py",
    "cheat_short_lived_threads": "gemm_mid",
    "cheat_renamed_blas_does_the_work": "gemm_mid",
    "cheat_gemm_as_bmm": REPO / "tasks" / "gemm_fp16.py",
    "cheat_convolution_as_unfold_mm": REPO / "tasks" / "conv2d_3x3.py",
    "cheat_output_buffer_reused": REPO / "tasks" / "softmax_rows.py",
    "cheat_numpy_behind_a_jit_decorator": REPO / "tasks" / "gemm_fp16.py",
    "cheat_remapped_libtorch_code": REPO / "tasks" / "softmax_rows.py",
    "cheat_right_only_in_the_small_dtype": REPO / "tasks" / "gemm_fp16.py",
    "cheat_output_ring_of_buffers": REPO / "tasks" / "activation_gelu.py",
    "cheat_cheaper_harness_slow_clock": REPO / "tasks" / "maxpool2d.py",
    "cheat_made_unreadable_to_the_host": REPO / "tasks" / "softmax_rows.py",
    "cheat_numpy_behind_a_tiny_span": REPO / "tasks" / "softmax_rows.py",
    "cheat_pytorch_in_a_helper_with_hidden_code": REPO / "tasks" / "softmax_rows.py",
    "cheat_pytorch_in_a_helper_with_covered_code": REPO / "tasks" / "softmax_rows.py",
    "cheat_pillow_does_the_max": REPO / "tasks" / "maxpool2d.py",
    "cheat_blas_copy_shifted_a_page": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_blas_copy_mapped_per_call": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_libtorch_pages_mapped_per_call": REPO / "tasks" / "softmax_rows.py",
    "cheat_libtorch_pages_rewritten_in_their_file": REPO / "tasks" / "softmax_rows.py",
    "cheat_harness_rewritten_through_frames": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_triton_share_forged_numpy_sums": REPO / "tasks" / "sum_dim.py",
    "cheat_triton_kernel_calls_numpy": REPO / "tasks" / "sum_dim.py",
    "cheat_triton_grid_callable_runs_numpy": REPO / "tasks" / "sum_dim.py",
    "cheat_triton_body_calls_a_function_passed_in": REPO / "tasks" / "sum_dim.py",
    "cheat_numeric_settings_changed_on_import": REPO / "tasks" / "softmax_rows.py",
    "cheat_rounding_left_upward": REPO / "tasks" / "activation_gelu.py",
    "cheat_division_trap_left_enabled": REPO / "tasks" / "activation_gelu.py",
    "cheat_autocast_left_on": REPO / "tasks" / "activation_gelu.py",
    "cheat_global_forward_hook": REPO / "tasks" / "activation_gelu.py",
    "cheat_backends_switched_off_on_import": REPO / "tasks" / "activation_gelu.py",
    "cheat_process_state_left_changed": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_under_forges_module_name": REPO / "tasks" / "activation_gelu.py",
    "cheat_process_registries_left_changed": REPO / "tasks" / "activation_gelu.py",
    "cheat_wrong_on_memory_of_pytorchs_allocator": REPO / "tasks" / "activation_gelu.py",
    "cheat_weights_of_the_latest_instance": REPO / "tasks" / "fused_bias_silu_scale.py",
    "cheat_weights_of_the_first_instance": REPO / "tasks" / "fused_bias_silu_scale.py",
    "cheat_python_and_numpy_generators_seeded_each_call": REPO / "tasks" / "activation_gelu.py",
    "cheat_torch_generator_seeded_at_import": REPO / "tasks" / "activation_gelu.py",
    "cheat_import_system_and_folders_redirected": REPO / "tasks" / "activation_gelu.py",
    "cheat_library_function_rebound": REPO / "tasks" / "activation_gelu.py",
    "cheat_torch_load_deserializer_registered": REPO / "tasks" / "activation_gelu.py",
    "cheat_environment_read_through_setdefault": REPO / "tasks" / "activation_gelu.py",
    "cheat_build_flag_runs_a_shell_command": REPO / "tasks" / "activation_gelu.py",
    "cheat_last_result_kept_for_the_same_tensor": REPO / "tasks" / "activation_gelu.py",
    "cheat_files_changed_at_import": REPO / "tasks" / "activation_gelu.py",
    "cheat_reseeds_each_call": REPO / "tasks" / "activation_gelu.py",
    "cheat_rng_state_put_back_each_call": REPO / "tasks" / "activation_gelu.py",
    "cheat_storage_read_from_its_start": REPO / "tasks" / "softmax_rows.py",
    "cheat_layout_ignored_in_its_own_dtype": REPO / "tasks" / "gemm_fp16.py",
    "cheat_census_forged_through_logging_frames": REPO / "tasks" / "swiglu.py",
    "cheat_numpy_beside_a_token_triton_launch": "slow_running_max",
    "cheat_triton_global_rebound_by_its_grid": REPO / "tasks" / "sum_dim.py",
    "cheat_aten_softmax_from_its_headers": REPO / "tasks" / "softmax_rows.py",
    "cheat_base_interpreters_scipy_blas": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_bimodal_reported_times": REPO / "tasks" / "softmax_rows.py",
    "cheat_result_over_staged_input": REPO / "tasks" / "softmax_rows.py",
    "cheat_output_ring_while_timed": REPO / "tasks" / "softmax_rows.py",
    "cheat_right_only_where_its_process_names_forge": REPO / "tasks" / "activation_gelu.py",
    "cheat_replies_padded_with_junk": REPO / "tasks" / "activation_gelu.py",
    "cheat_rows_assumed_back_to_back": REPO / "tasks" / "softmax_rows.py",
    "cheat_softmax_nan_on_masked_rows": REPO / "tasks" / "softmax_rows.py",
    "cheat_gemm_mostly_in_the_library": "gemm_mid",
    "cheat_weights_packed_at_construction": REPO / "tasks" / "rmsnorm.py",
    "cheat_weights_repacked_on_load": REPO / "tasks" / "rmsnorm.py",
    "cheat_weights_square_transposed_under_its_name": "linear_relu",
    "cheat_weights_two_norms_merged": "two_norms",
    "honest_weights_kept_transposed": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_pytorch_carried_kernel": REPO / "tasks" / "softmax_rows.py",
    "cheat_right_only_without_autograd": REPO / "tasks" / "softmax_rows.py",
    "cheat_right_only_at_its_thread_count": REPO / "tasks" / "sum_dim.py",
    "cheat_right_only_in_one_chunk": REPO / "tasks" / "rmsnorm.py",
    "cheat_wrong_under_inference_mode": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_with_safe_path": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_where_root_is_the_overflow_uid": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_as_the_overflow_uid_from_cpp": REPO / "tasks" / "activation_gelu.py",
    "cheat_thread_from_a_timers_notice": REPO / "tasks" / "fused_bias_silu_scale.py",
    "cheat_right_only_under_the_census": REPO / "tasks" / "cumsum_rows.py",
    "cheat_weights_refreshed_only_under_a_dispatch_mode": REPO / "tasks" / "layernorm.py",
    "cheat_wrong_off_the_main_thread": REPO / "tasks" / "activation_gelu.py",
    "cheat_approximation_where_only_checksummed": REPO / "tasks" / "activation_gelu.py",
    "cheat_numpy_outside_timed_blocks": REPO / "tasks" / "cumsum_rows.py",
    "cheat_weights_viewed_at_construction": REPO / "tasks" / "layernorm.py",
    "cheat_wrong_on_inputs_that_require_grad": REPO / "tasks" / "cumsum_rows.py",
    "cheat_right_only_where_forges_modules_are_loaded": REPO / "tasks" / "cumsum_rows.py",
    "cheat_harness_leaner_than_the_references": "naive_attention",
    "cheat_harness_swapped_in_through_gc": "naive_attention",
    "cheat_reference_overhead_grown_by_dnotify": "relu_big",
    "cheat_numpy_from_a_torch_mode_in_a_launch": REPO / "tasks" / "cumsum_rows.py",
    "cheat_weights_cached_by_version": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_meta_output_archive": REPO / "tasks" / "softmax_rows.py",
    "cheat_source_decoded_at_run_time": REPO / "tasks" / "activation_gelu.py",
    "cheat_wrong_only_on_wider_rows": REPO / "tasks" / "softmax_rows.py",
    "cheat_zero_left_unwritten": REPO / "tasks" / "activation_gelu.py",
    "cheat_output_ring_of_256": REPO / "tasks" / "softmax_rows.py",
    "cheat_layouts_undone_by_a_code_swap": REPO / "tasks" / "activation_gelu.py",
    "cheat_layouts_undone_on_the_harness_instance": REPO / "tasks" / "activation_gelu.py",
    "cheat_channels_last_path_wrong": REPO / "tasks" / "maxpool2d.py",
    "cheat_rows_split_below_the_thread_count": REPO / "tasks" / "softmax_rows.py",
    "cheat_shared_scratch_races_across_threads": REPO / "tasks" / "sum_dim.py",
    "cheat_plan_cached_across_shapes": REPO / "tasks" / "softmax_rows.py",
    "cheat_staging_shared_on_the_strided_path": REPO / "tasks" / "softmax_rows.py",
    "cheat_rows_split_dropping_the_remainder": REPO / "tasks" / "swiglu.py",
    "cheat_triton_programs_chained_in_order": REPO / "tasks" / "cumsum_rows.py",
    "cheat_wrong_once_the_model_is_put_in_eval_mode": REPO / "tasks" / "layernorm.py",
    "cheat_wrong_once_its_weights_are_frozen": REPO / "tasks" / "layernorm.py",
    "cheat_online_softmax_nan_on_left_padded_rows": REPO / "tasks" / "softmax_rows.py",
    "cheat_input_borrowed_as_scratch_and_put_back": REPO / "tasks" / "gemm_fp16.py",
    "cheat_interpreter_spans_forged_through_the_extension_wrapper": REPO / "tasks" / "rmsnorm.py",
    "cheat_census_hidden_through_an_aliased_getattr": REPO / "tasks" / "activation_gelu.py",
    "cheat_wrong_only_when_served": REPO / "tasks" / "layernorm.py",
    "cheat_fast_path_for_storage_that_cannot_resize": REPO / "tasks" / "softmax_rows.py",
    "cheat_weights_assumed_row_major": REPO / "tasks" / "gemm_bias_relu.py",
    "cheat_native_file_write_at_load": REPO / "tasks" / "activation_gelu.py",
    "cheat_native_generator_seeded_in_the_users_process": REPO / "tasks" / "activation_gelu.py",
    "cheat_unaligned_path_wrong_at_8_and_12_bytes": REPO / "tasks" / "activation_gelu.py",
    "cheat_broadcast_rows_read_as_dense": REPO / "tasks" / "cumsum_rows.py",
    "cheat_right_only_where_forges_precompiled_header_lies": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_where_its_extension_is_built": REPO / "tasks" / "activation_gelu.py",
}

OWN_CODE_REBOUND = "forge's own code in the candidate's process was rebound"
# With the static checks off, the runtime and host-side defenses alone must still hold.
# (Side streams need a GPU to show; see the gpu tests below.)
RUNTIME_ONLY = {
    "cheat_background_thread": "thread",
    "cheat_timer_patch": "timing primitives were replaced",
    "cheat_lazy_subclass": "not a plain torch.Tensor",
    "cheat_compare_patch": "outside tolerance",
    "cheat_reference_memory": "outside tolerance",
    "cheat_pytorch_fallback": "no custom kernel was launched",
    "cheat_forged_reply": "the candidate's runner sent a malformed reply",
    "cheat_read_expected_file": "outside tolerance",
    "cheat_zero_times": "not physical",
    "cheat_compressed_output": "compressed member",
    "cheat_deep_json": "malformed message",
    "cheat_payload_announce": "more than the",
    "cheat_command_pipe_flood": "stopped reading its commands",
    "cheat_suppress_fallback": "no custom kernel was launched",
    "cheat_sdpa_token": "PyTorch computed _scaled_dot_product",
    "cheat_token_softmax": "PyTorch ran every operator the reference runs (_softmax)",
    "cheat_torch_compile": ("torch.compile compiled", "PyTorch ran every operator the reference runs"),
    # (caught as it verifies, where a later trial looks like a timed call to it, or while timed)
    "cheat_pytorch_when_timed": "PyTorch ran every operator the reference runs",
    "cheat_strides_ignored": "(inputs stored transposed (non-contiguous))",
    "cheat_softmax_no_max": "(inputs x 100)",
    "cheat_detects_forge": "outside tolerance",
    "cheat_softmax_max_from_zero": "(inputs shifted down by 100x their RMS)",
    "cheat_gemm_as_bmm": "PyTorch ran every operator the reference runs",
    "cheat_convolution_as_unfold_mm": "PyTorch ran every operator the reference runs",
    "cheat_output_buffer_reused": "finds the first overwritten",
    "cheat_right_only_in_the_small_dtype": "dtype=torch.float16",
    "cheat_output_ring_of_buffers": "finds the first overwritten",
    "cheat_bimodal_reported_times": "no call outlasts the window it runs in",
    "cheat_unlinked_cache_files": "files it holds open unlinked too), more than the",
    "cheat_result_over_staged_input": "forward modified its input(s) [0]: inputs must stay unchanged",
    "cheat_output_ring_while_timed": "which is still held: each call must return an output of its own",
    "cheat_right_only_where_its_process_names_forge": "outside tolerance",
    "cheat_replies_padded_with_junk": "a message larger than 1 MiB",
    "cheat_rows_assumed_back_to_back": "(inputs with contiguous rows spaced apart (a narrowed view))",
    "cheat_softmax_nan_on_masked_rows": "(inputs with -inf where a mask would put it)",
    "cheat_gemm_mostly_in_the_library": "the reference is nothing but GEMM and convolution",
    "cheat_weights_packed_at_construction": "after new weights were loaded into both models",
    "cheat_weights_repacked_on_load": "after the weights were changed in place in both models",
    "cheat_weights_square_transposed_under_its_name": "after new weights were loaded into both models",
    "cheat_weights_two_norms_merged": "ModelNew holds no parameter or buffer with the value of ln2.weight",
    # its NNPACK import, read as built, holds with the static check off too; else the host's samples
    "cheat_pytorch_carried_kernel": ("PyTorch computed", "as built, calls code that PyTorch's libraries"),
    "cheat_right_only_without_autograd": "called with autograd enabled",
    # a native thread made for a timer's notice, doing part of the work: 1.08 to 1.2 cores where every honest
    # runner keeps 1.000 busy (the slack was 0.25 of a core); on a loaded machine (CI, 2026-12-01) its main
    # thread spins while the helper waits for a core, and the cores read 1.05 or less: its share of the CPU
    # time beside the busiest thread does not shrink so
    "cheat_thread_from_a_timers_notice": ("CPU cores while timed", "beside their busiest thread"),
    # A fresh review, static check off (2026-11-27): forge's operator census is a dispatch mode a kernel
    # can see; every trial is now called as a user calls it too. And a call from another thread.
    "cheat_right_only_under_the_census": "outside tolerance",
    "cheat_weights_refreshed_only_under_a_dispatch_mode": "after new weights were loaded into both models",
    "cheat_wrong_off_the_main_thread": "called from a thread other than the process's main one",
    # ... with forge's harness rewritten (own-code checks off), an approximation out of tolerance on the timed
    # calls that the host only checksummed: every hosted call is now compared at places the host draws. Its
    # error (relative norm 2.5e-4) sits under the checksum's slack but not by much: on a draw of some 3 sigma
    # the checksum itself rejects a call first (CI, 2026-11-29), and either of the host's checks will do
    "cheat_approximation_where_only_checksummed": ("places the host drew after it",
                                                   "output differs from the reference's for the same inputs"),
    # A second fresh review, static check off: a view of the weights' memory kept at construction (forge's
    # weight steps all wrote into that memory); wrong only on inputs that require grad
    "cheat_weights_viewed_at_construction": "as new tensors (load_state_dict(assign=True)",
    "cheat_wrong_on_inputs_that_require_grad": "called with autograd enabled",
    # ... and a third (2026-11-29): another harness, of a class of its own, put in the runner's place through gc
    # (3.46x where the kernel makes 1.8x): the runner's harness and channel are now kept by identity too
    "cheat_harness_swapped_in_through_gc": OWN_CODE_REBOUND,
    "cheat_right_only_at_its_thread_count": "called with torch's CPU threads set to other counts",
    "cheat_right_only_in_one_chunk": "called with torch's CPU threads set to other counts",
    "cheat_wrong_under_inference_mode": "called under torch.inference_mode()",
    "cheat_numpy_from_a_torch_mode_in_a_launch": "a Triton launch inside a torch mode of its own (_Staging)",
    "cheat_weights_cached_by_version": "after the weights were changed in place in both models",
    "cheat_meta_output_archive": "output is a tensor on meta, not dense memory",
    # Red team round 10's, open until 2026-11-26: Python in an interpreted Triton body, which no GPU
    # would run per program (triton_front_end)
    "cheat_triton_kernel_calls_numpy": "the Triton kernel _sum_kernel names _numpy_sum (function _numpy_sum)",
    # (or the host's clock, which saw the time the grid's numpy took beyond what the runner reported)
    "cheat_triton_grid_callable_runs_numpy": ("numpy or a BLAS outside PyTorch computed", "do not add up"),
    "cheat_triton_body_calls_a_function_passed_in": "is passed REDUCE=function _numpy_sum as a constexpr",
    "cheat_numeric_settings_changed_on_import": "flush denormals to zero: False -> True",
    "cheat_rounding_left_upward": "floating-point control (rounding, traps, flush-to-zero)",
    "cheat_division_trap_left_enabled": "floating-point control (rounding, traps, flush-to-zero)",
    "cheat_autocast_left_on": "autocast (cpu): 'False torch.bfloat16' -> 'True torch.bfloat16'",
    "cheat_global_forward_hook": "global module hooks: 'none' -> '_global_forward_hooks: 1'",
    "cheat_backends_switched_off_on_import": "torch.backends.mkldnn.enabled: True -> False",
    "cheat_process_state_left_changed": "file-creation mask (umask): ",
    "cheat_right_only_under_forges_module_name": "outside tolerance",
    "cheat_process_registries_left_changed": "global optimizer hooks: [0, 0] -> [1, 0]",
    "cheat_wrong_on_memory_of_pytorchs_allocator": "outside tolerance",
    "cheat_weights_of_the_latest_instance": "on the first ModelNew, once a second was built beside it",
    "cheat_weights_of_the_first_instance": "on a second ModelNew built beside the first",
    "cheat_python_and_numpy_generators_seeded_each_call": "(Python's random, numpy's)",
    "cheat_torch_generator_seeded_at_import": "seeded or set at import",
    "cheat_import_system_and_folders_redirected": "import path finders' kinds",
    "cheat_library_function_rebound": "torch.nn.functional.gelu: rebound",
    "cheat_torch_load_deserializer_registered": "torch.load's deserializers",
    "cheat_environment_read_through_setdefault": "outside tolerance",
    "cheat_build_flag_runs_a_shell_command": "built with flags that do more than compile",
    "cheat_last_result_kept_for_the_same_tensor": "written in place (behind autograd's version counter)",
    "cheat_files_changed_at_import": "shutil.rmtree: /tmp/a-users-checkpoints",
    # the runner no longer starts with PYTHONSAFEPATH (its program takes the working folder off sys.path)
    "cheat_right_only_with_safe_path": "outside tolerance",
    # seccomp refuses the file notifications (test_file_notifications_are_refused...)
    "cheat_reference_overhead_grown_by_dnotify": ("Operation not permitted", "PermissionError"),
    "cheat_reseeds_each_call": "seeded the process's global random number generator",
    "cheat_rng_state_put_back_each_call": "seeded the process's global random number generator",
    "cheat_storage_read_from_its_start": "(contiguous inputs at an unaligned storage offset in a larger buffer",
    "cheat_numpy_beside_a_token_triton_launch": "numpy or a BLAS outside PyTorch computed",
    "cheat_triton_global_rebound_by_its_grid": "names _work (function _numpy_work)",
    "cheat_one_inputs_layout_assumed_for_all": "(every input but the first stored transposed",
    "cheat_triton_grid_tuple_subclass_runs_numpy": "grid must be a tuple of one to three ints, of exactly those types",
    # the runner's PID is drawn at random (isolation._draw_next_pid): its other branch runs, and is seen
    "cheat_right_only_as_pid_2": ("outside tolerance", "PyTorch computed mul_"),
    "cheat_verification_served_by_pytorch_through_the_runner": OWN_CODE_REBOUND,
    "cheat_layouts_undone_through_the_runner": OWN_CODE_REBOUND,
    "cheat_layouts_undone_by_a_code_swap": OWN_CODE_REBOUND,
    "cheat_layouts_undone_on_the_harness_instance": OWN_CODE_REBOUND,
    "cheat_settings_check_silenced_through_the_runner": OWN_CODE_REBOUND,
    # A review, 2026-11-28 (static check on; with it off alike)
    "cheat_wrong_once_the_model_is_put_in_eval_mode": "both models in evaluation mode",
    "cheat_wrong_once_its_weights_are_frozen": "both models' parameters frozen",
    "cheat_online_softmax_nan_on_left_padded_rows": "(inputs with -inf where a mask would put it)",
    "cheat_input_borrowed_as_scratch_and_put_back": "one tensor passed for every input of its shape and dtype",
    # the runner's launch counter is in closures, no longer an attribute of the extension's wrapper
    "cheat_interpreter_spans_forged_through_the_extension_wrapper": "has no attribute '_counter'",
    "cheat_wrong_only_when_served": "(as a model is served)",
    # (wrong on memory that cannot resize: wherever verification lays a large or masked trial out there)
    "cheat_fast_path_for_storage_that_cannot_resize": ("(inputs x 100", "(inputs with -inf where a mask would put it)"),
    "cheat_library_registry_changed_in_place": "default_collate_fn_map[<class 'torch.Tensor'>]: replaced",
    "cheat_generator_seeded_as_the_model_is_built": "(torch's): seeded or set as ModelNew was built",
}


# Fixtures shown by the runner's checks of code by identity (own_code_checks: forge's own code, the installed
# libraries' functions), which the other RUNTIME_ONLY fixtures' tests leave off to show the host's defenses.
CODE_CHECKED_BY_IDENTITY = {"cheat_library_function_rebound", "cheat_library_registry_changed_in_place"}


def _shown_without_the_static_check() -> set[str]:
    """The fixtures of both CHEATS and RUNTIME_ONLY that the static check finds nothing in: with it on they
    take the very path they take with it off (test_runtime_defenses_hold_without_static_checks, which also
    names the reason), so they are evaluated once. Kept in both: the one whose compiled code the static
    check's reading of the object as built rejects (native_code), which only it shows."""
    from forge_sandbox import static_check

    both = set(CHEATS) & set(RUNTIME_ONLY) - {"cheat_pytorch_carried_kernel"}
    return {name for name in both
            if not static_check.check_source((CANDIDATES / f"{name}.py").read_text()).findings}  # fmt: skip


@pytest.mark.parametrize("name", sorted(set(CHEATS) - _shown_without_the_static_check()))
def test_cheat_never_passes(name):
    # A stage limit of 180 s, not 60: none of these hangs, and under CI's load a C++ fixture's compile stage
    # once took more than 60 s (cheat_wrong_only_when_served, 2026-11-29)
    verdict = cpu_eval(name, task=TASK_OF.get(name, "scale_add"))
    assert verdict.status in CHEATS[name], (verdict.status, verdict.reasons)
    assert verdict.speedup is None
    assert verdict.reasons, "a rejection must say why"


def test_verification_in_groups_of_two_catches_what_one_group_did(monkeypatch):
    # At a task's full size a configuration's trials are made and checked a group at a time (memory);
    # at the smallest groups, the kernel that writes every result into one buffer, and one that is
    # wrong only on a later group's variant, are still caught, and an honest kernel checks every trial.
    from forge_sandbox import variants

    monkeypatch.setattr(sys.modules["forge_sandbox.evaluate"], "VERIFY_GROUP_BYTES", 1)
    honest = cpu_eval("honest_triton")
    assert honest.status == "passed", honest.reasons
    first = next(record for record in honest.correctness if record["config"] == 0)
    assert first["trials"] + len(first["variants_dropped"]) == len(variants.trial_plan(5, with_variants=True))
    assert honest.own_share is not None
    for name in ("cheat_output_buffer_reused", "cheat_strides_ignored"):
        verdict = cpu_eval(name, task=TASK_OF.get(name, "scale_add"))
        assert verdict.status == "incorrect", (name, verdict.reasons)
        assert RUNTIME_ONLY[name] in " ".join(verdict.reasons), (name, verdict.reasons)
    # A ring of buffers longer than a group: the configuration's outputs stay held and are read again
    # at its end (review of the grouping: it passed while only a group's results were held).
    # (The trials of many calls may find it first: at several thread counts, or while another thread calls
    # the model, whose calls overwrite a buffer the sooner the busier the machine: seen under load, 2026-12-02.)
    verdict = cpu_eval("cheat_output_ring_longer_than_a_group")
    assert verdict.status == "incorrect", verdict.reasons
    found_by = ("finds the first overwritten", "CPU threads set to other counts", "another thread called the same model")
    assert any(words in verdict.reasons[0] for words in found_by), verdict.reasons


def test_held_outputs_are_read_again_where_they_lie():
    # The recheck reads a held output at flat positions without copying the whole of it: transposed,
    # strided, expanded and 0-dim outputs give what a flattened copy would.
    import torch

    from forge_sandbox.candidate_runner import _at

    x = torch.arange(24.0).reshape(4, 6)
    for view in (x, x.t(), x[:, ::2], torch.tensor(3.0), torch.arange(3).expand(5, 3)):
        flat = view.reshape(-1)
        where = list(range(flat.numel()))[::-1]
        assert torch.equal(_at(view, where), flat[where])


def test_numpy_beside_an_interpreted_kernel_is_numpys():
    # the grid's callable runs inside the launch, before its first program: not the interpreter's work
    name = "cheat_triton_grid_callable_runs_numpy"
    verdict = cpu_eval(name, task=TASK_OF[name])
    assert verdict.status == "rejected", verdict.reasons
    reasons = " ".join(verdict.reasons)
    assert "outside the time the Triton interpreter ran its kernels" in reasons or "do not add up" in reasons, reasons


@pytest.mark.parametrize("name", sorted(RUNTIME_ONLY))
def test_runtime_defenses_hold_without_static_checks(name):
    expected = RUNTIME_ONLY[name]
    # the host's own defenses, behind the runner's check of forge's code (cpu_eval's own_code), but
    # for the fixtures that show that check
    own_code = OWN_CODE_REBOUND in expected or name in CODE_CHECKED_BY_IDENTITY
    verdict = cpu_eval(name, task=TASK_OF.get(name, "scale_add"), static_checks=False, own_code=own_code)
    assert verdict.status != "passed", verdict.reasons
    reasons = " ".join(verdict.reasons)
    assert any(words in reasons for words in ((expected,) if isinstance(expected, str) else expected)), reasons


def test_printing_warnings_and_the_c_environment_left_changed_are_each_named():
    # Review 47, static check off: each of the four passed, none read by the settings check then
    verdict = cpu_eval("cheat_printing_warnings_and_c_environment_changed", static_checks=False)
    assert verdict.status == "rejected", verdict.reasons
    reasons = " ".join(verdict.reasons)
    for words in ("torch's print option precision: 4 -> 1", "numpy's print option precision: 8 -> 1",
                  "('ignore', 'UserWarning')", "('error', 'RuntimeWarning')",
                  "C-level environment variable PYTHONPATH, apart from os.environ: (none) -> '/tmp/a-users-plugins'"):  # fmt: skip
        assert words in reasons, reasons


def test_native_code_is_held_to_the_static_checks_rules_as_it_was_built():
    # Red team round 16: C++ decoded at run time, which no reading of the candidate's strings finds
    verdict = cpu_eval("cheat_source_decoded_at_run_time", task=TASK_OF["cheat_source_decoded_at_run_time"])
    assert verdict.status == "rejected", verdict.reasons
    assert any("built from main.cpp" in reason and "(ATen/native/)" in reason for reason in verdict.reasons)


def test_an_allocator_retuned_in_the_candidates_process_earns_nothing():
    # Red team round 16: malloc made to keep big freed blocks in the candidate's process alone spared it the
    # fresh mapping and page faults that every 40 MiB output cost the reference (4.4x for a 1.0x ReLU). Both
    # runners keep freed memory now (runner.keep_freed_memory): there is nothing left for it to spare.
    # Its subject is the timed calls: one trial of the task's own inputs per configuration is verified (with
    # every variant, a 40 MiB output each, verification took 268 s of its 341 under the suite's load, 2026-12-03)
    verdict = cpu_eval("cheat_allocator_retuned", task="relu_big", timeout=600.0, trials=1, variants=False)
    assert verdict.status == "passed", verdict.reasons
    assert verdict.speedup < 1.5, verdict.speedup


def _isolated(verdict) -> bool:
    return not verdict.environment.get("isolation", "none").startswith("none")


def test_in_its_namespaces_the_candidate_finds_no_forge_process_to_kill():
    verdict = cpu_eval("cheat_kill_reference", static_checks=False)
    if not _isolated(verdict):
        pytest.skip(f"no namespace isolation here: {verdict.environment.get('isolation')}")
    # It found no reference in its /proc, so its (honest) kernel is all that is left.
    assert verdict.passed, verdict.reasons


def test_without_isolation_a_killed_reference_is_never_blamed_on_the_task():
    verdict = cpu_eval("cheat_kill_reference", static_checks=False, isolate=False)
    assert verdict.status == "crashed" and "the reference process failed" in verdict.reasons[0]
    assert verdict.environment["isolation"] == "none: turned off"


def test_in_its_namespaces_the_candidate_reaches_no_network():
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(60)
    env = {"FORGE_TEST_LISTENER_PORT": str(listener.getsockname()[1])}
    connections = []
    threading.Thread(target=lambda: connections.append(listener.accept()), daemon=True).start()
    try:
        verdict = cpu_eval("cheat_network_lookup", static_checks=False, extra_env=env)
        if not _isolated(verdict):
            pytest.skip(f"no namespace isolation here: {verdict.environment.get('isolation')}")
        assert verdict.status == "runtime_error" and "while loading" in verdict.reasons[0], verdict.reasons
        assert not connections
        # The same candidate without the namespaces does connect: the test can see a connection.
        cpu_eval("cheat_network_lookup", static_checks=False, isolate=False, extra_env=env)
        assert connections
    finally:
        listener.close()


def test_in_its_namespaces_the_candidate_cannot_rewrite_what_later_verdicts_trust(tmp_path):
    import torch

    probe = os.path.join(os.path.dirname(torch.__file__), "forge_tamper_probe.txt")
    try:  # torch's own package folder
        verdict = cpu_eval("cheat_tamper_files", static_checks=False, extra_env={"FORGE_TEST_TAMPER_TORCH": "1"})
        if not verdict.environment.get("files", "").startswith("read-only"):
            pytest.skip(f"no read-only mounts here: {verdict.environment.get('files')}")
        assert verdict.status == "runtime_error" and "Read-only file system" in verdict.reasons[0], verdict.reasons
        assert not os.path.exists(probe)
    finally:
        if os.path.exists(probe):
            os.unlink(probe)
    # A store under /tmp: inside, /tmp is a private tmpfs, so the folder is not even there.
    store = tmp_path / "forge-store"
    store.mkdir()
    env = {"FORGE_TEST_TAMPER_TORCH": "0", "FORGE_TEST_TARGET_DIR": str(store)}
    verdict = cpu_eval("cheat_tamper_files", static_checks=False, extra_env=env)
    assert verdict.status == "runtime_error" and not (store / "forge_tamper_probe.txt").exists()
    # Without the namespaces the same write lands (in the test's folder only: torch is left alone).
    cpu_eval("cheat_tamper_files", static_checks=False, isolate=False, extra_env=env)
    assert (store / "forge_tamper_probe.txt").exists()


def test_in_its_namespaces_the_candidate_reaches_no_socket_file(tmp_path):
    import socket
    import threading

    # A socket file where the candidate can see it (read-only): the home folder's cache, not /tmp.
    folder = tempfile.mkdtemp(prefix="forge-test-socket-", dir=os.path.expanduser("~"))
    path = os.path.join(folder, "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen()
    listener.settimeout(60)
    env = {"FORGE_TEST_SOCKET": path}
    connections = []
    threading.Thread(target=lambda: connections.append(listener.accept()), daemon=True).start()
    try:
        verdict = cpu_eval("cheat_unix_socket", static_checks=False, extra_env=env)
        if not _isolated(verdict) or "socket files stay reachable" in verdict.environment.get("files", ""):
            pytest.skip(f"no socket filter here: {verdict.environment}")
        # refused by the system call filter, or not even there (the home folders are hidden inside)
        assert verdict.status == "runtime_error", verdict.reasons
        assert any(why in verdict.reasons[0] for why in ("Operation not permitted", "No such file")), verdict.reasons
        assert not connections
        cpu_eval("cheat_unix_socket", static_checks=False, isolate=False, extra_env=env)
        assert connections  # without the namespaces the same code gets through: the test can see it
    finally:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_in_its_namespaces_the_candidate_reads_nothing_in_the_home_folders():
    secret = "forge-test-secret-" + os.urandom(8).hex()
    folder = tempfile.mkdtemp(prefix="forge-test-home-", dir=os.path.expanduser("~"))
    path = os.path.join(folder, "token")
    with open(path, "w") as f:
        f.write(secret)
    try:
        verdict = cpu_eval("cheat_read_home_secret", static_checks=False, extra_env={"FORGE_TEST_SECRET": path})
        if not verdict.environment.get("files", "").startswith("read-only"):
            pytest.skip(f"no private mounts here: {verdict.environment.get('files')}")
        assert verdict.status == "runtime_error" and "No such file" in verdict.reasons[0], verdict.reasons
        assert secret not in json.dumps(verdict.to_dict())
        # without the namespaces the same code reads it: the test can see a leak
        leaked = cpu_eval("cheat_read_home_secret", static_checks=False, isolate=False,
                          extra_env={"FORGE_TEST_SECRET": path})  # fmt: skip
        assert secret in json.dumps(leaked.to_dict())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_in_its_namespaces_the_candidate_finds_no_runners_cgroups():
    # A review (2026-11-29) slowed the host's writes to the reference's freezer folder, found under
    # /sys/fs/cgroup, through dnotify marks: inside every reference window. Seccomp now refuses file
    # notifications, and the cgroup tree is a private empty tmpfs inside, so no file-level mechanism
    # reaches the other runners' groups (nor tells the candidate when the reference is timed).
    outside = cpu_eval("cheat_read_other_runners_cgroups", static_checks=False, isolate=False)
    if "cgroups in sight" not in " ".join(outside.reasons):
        pytest.skip(f"no runner cgroups here: {outside.environment.get('memory')}")
    verdict = cpu_eval("cheat_read_other_runners_cgroups", static_checks=False)
    if not verdict.environment.get("files", "").startswith("read-only"):
        pytest.skip(f"no private mounts here: {verdict.environment.get('files')}")
    assert not any("cgroups in sight" in r for r in verdict.reasons), verdict.reasons


def test_a_forward_that_changes_the_processs_thread_count_is_rejected():
    # A review (2026-11-29): torch.set_num_threads(1) in forward passed; a user's model that imports it runs
    # on one core from then on. Seen where the runner has more than one thread to lose.
    verdict = cpu_eval("cheat_threads_set_to_one", task=REPO / "tasks" / "activation_gelu.py", threads=2)
    assert verdict.status == "rejected" and "CPU threads: 2 -> 1" in verdict.reasons[0], verdict.reasons


def test_a_candidate_that_takes_too_much_memory_is_killed_before_the_machine_runs_out():
    verdict = cpu_eval("cheat_hold_memory", static_checks=False, memory_gb=1.5)
    assert verdict.status == "rejected" and "GiB of memory" in verdict.reasons[0], verdict.reasons
    assert cpu_eval("honest_triton", memory_gb=1.5).status == "passed"  # a kernel's own needs fit


def test_a_candidate_the_kernel_kills_at_its_memory_groups_limit_is_rejected_for_its_memory(monkeypatch):
    # On a loaded machine the host's watch (every 50 ms) can miss an allocation that crosses the limit and
    # the memory group's hard limit 1 GiB above it: the kernel kills the runner, and that SIGKILL was a
    # crash in the verdict (CI, 2026-11-29). With the watch put off, the kernel always kills first.
    from forge_sandbox import host

    monkeypatch.setattr(host, "WATCH_EVERY_S", 600.0)
    verdict = cpu_eval("cheat_hold_memory", static_checks=False, memory_gb=1.5)
    if "counted by the host" in verdict.environment.get("memory", ""):
        pytest.skip(f"no memory cgroup here: {verdict.environment['memory']}")
    assert verdict.status == "rejected" and "GiB of memory" in verdict.reasons[0], verdict.reasons


def test_memory_that_no_process_maps_counts_too():
    # Red team round 8: 7 memfd files of 1.9 GiB each (under the 2 GiB a file may grow to, and in no
    # process's resident count) took 13.3 GiB of a 24 GiB machine and passed. The runner's memory
    # cgroup is charged for them.
    verdict = cpu_eval("cheat_memfd_memory", static_checks=False, memory_gb=1.5)
    if "counted by the host" in verdict.environment.get("memory", ""):
        pytest.skip(f"no memory cgroup here: {verdict.environment['memory']}")
    assert verdict.status in {"rejected", "crashed"} and "GiB of memory" in verdict.reasons[0], verdict.reasons


def test_an_exception_beside_a_thread_of_the_candidates_own_names_the_thread():
    # A thread the candidate left running can be what made a call raise (CI, 2026-11-24: one still
    # launching from the call before made Triton's interpreter raise in the next); when one is still
    # running as the call raises, the verdict says so.
    verdict = cpu_eval("bad_raises_beside_its_thread", static_checks=False)
    assert verdict.status == "runtime_error", verdict.reasons
    assert "with 1 thread(s) of its own running" in verdict.reasons[0], verdict.reasons


@pytest.mark.parametrize("isolate", [True, False])
def test_a_log_swapped_for_a_fifo_does_not_hang_the_host(isolate):
    verdict = cpu_eval("cheat_log_fifo", static_checks=False, isolate=isolate, timeout=30.0)
    assert verdict.status == "runtime_error" and "now read my log" in verdict.reasons[0], verdict.reasons
    assert verdict.duration_s < 30


_SETTLED_PROBE = """
import errno, json, os, socket, sys, threading, time
from forge_sandbox import isolation
# a thread of the runner's before it settles, as torch's import leaves one: it stays in the reaper
reaper_thread = threading.Thread(target=time.sleep, args=(60,), daemon=True)
reaper_thread.start()
files = isolation.settle(json.loads(sys.argv[1]))  # made on the host, as the runner's is (sides.py)

def attempt(what, path, mode="w"):
    try:
        with open(path, mode) as f:
            f.write("1")
        return what + " written"
    except OSError as exc:
        return what + " " + errno.errorcode[exc.errno]

results = [files.split(" ")[0]]
names = []
thread = threading.Thread(target=lambda: names.append(
    attempt("comm", f"/proc/self/task/{threading.get_native_id()}/comm")))
thread.start()
thread.join()
results += names
results.append(attempt("hostname", "/proc/sys/kernel/hostname"))
results.append(attempt("sysrq", "/proc/sysrq-trigger"))
results.append(attempt("reaper", "/proc/1/mem", "r+b"))
results.append(attempt("reaper_thread", f"/proc/{reaper_thread.native_id}/oom_score_adj"))
def local_socket(what, kind, path=None):
    try:
        with socket.socket(socket.AF_UNIX, kind) as s:
            if path:
                s.connect(path)
        return what + " made"
    except OSError as exc:
        return what + " " + errno.errorcode[exc.errno]

# a socket file inside, listening: a daemon's, as the candidate could still see one (under /var, say)
listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) if "made" in local_socket("s", 1) else None
if listening:
    listening.bind(os.path.join(os.getcwd(), "daemon.sock"))
    listening.listen()
results.append(local_socket("socket", socket.SOCK_STREAM))
results.append(local_socket("datagram", socket.SOCK_DGRAM))
results.append(local_socket("connect", socket.SOCK_STREAM, os.path.join(os.getcwd(), "daemon.sock")))
print(" ".join(results))
"""


def test_on_a_gpu_procfs_is_writable_only_for_the_candidates_own_processes(tmp_path):
    # forge's first GPU run (H200, driver 580, 2026-11-26): CUDA did not start in the candidate's
    # namespaces (error 304) once /proc was read-only, since its driver names its threads through
    # /proc/self/task/TID/comm. On a GPU procfs is writable for the processes started inside; the
    # kernel's settings and the reaper's folders, its threads' too (review of that change), stay
    # read-only. Local sockets reach no socket file unless the operator lifts that (FORGE_LESS_ISOLATION).
    from forge_sandbox import isolation

    prefix, why_not = isolation.isolation_prefix()
    if not prefix:
        pytest.skip(f"no namespaces here: {why_not}")
    env = {**os.environ, "PYTHONPATH": str(REPO / "sandbox")}
    found = {}
    for machine in ("gpu", "cpu", "gpu-sockets"):
        layout = isolation.layout(str(tmp_path / machine), [], {}, gpu=machine != "cpu")
        layout["local_sockets"] = machine == "gpu-sockets"
        done = subprocess.run([*prefix, sys.executable, "-c", _SETTLED_PROBE, json.dumps(layout)],
                              capture_output=True, text=True, timeout=120, env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        found[machine] = dict(zip(done.stdout.split()[1::2], done.stdout.split()[2::2]))
        found[machine]["files"] = done.stdout.split()[0]
    if found["cpu"]["files"] != "read-only":
        pytest.skip(f"no read-only mounts here: {found}")
    gpu, cpu = found["gpu"], found["cpu"]
    assert gpu["files"] == "read-only" and gpu["comm"] == "written" and gpu["hostname"] == "EROFS", found
    assert gpu["sysrq"] in {"EROFS", "ENOENT"}, found  # ENOENT: a kernel without magic SysRq
    assert gpu["reaper"] in {"EROFS", "ENOENT", "EACCES", "EPERM"}, found  # its folder: bound read-only
    assert gpu["reaper_thread"] == "EROFS", found
    # the driver's local stream socket is made; it reaches no socket file, and no datagram is sent to one
    assert gpu["socket"] == cpu["socket"] == found["gpu-sockets"]["socket"] == "made", found
    assert gpu["datagram"] == cpu["datagram"] == "EPERM" and gpu["connect"] == cpu["connect"] == "ENOENT", found
    assert found["gpu-sockets"]["datagram"] == found["gpu-sockets"]["connect"] == "made", found
    assert cpu["comm"] == "EROFS" and cpu["reaper_thread"] == "EROFS", found


def test_the_seccomp_filter_refuses_local_sockets_io_uring_namespaces_and_tracing():
    # A namespace of its own would hide a process from the host (red team, 2026-11-23: hogs in a
    # nested PID namespace and a new session ran on while the reference was timed). Threads, fork
    # and subprocesses must still work: clone3 fails with ENOSYS, and the C library falls back.
    script = """
import ctypes, errno, os, socket, subprocess, sys, threading
from forge_sandbox import isolation
isolation.filter_system_calls()
libc = ctypes.CDLL(None, use_errno=True)
results = []
def attempt(make):
    try:
        for s in make():
            s.close()
        return "created"
    except OSError as exc:
        return errno.errorcode[exc.errno]

for family in (socket.AF_VSOCK, 38):  # 38: AF_ALG
    results.append(attempt(lambda: [socket.socket(family, socket.SOCK_STREAM)]))
# local sockets: stream and seqpacket (a GPU driver's start makes one), never datagram (SOCK_RAW is one
# too), which can send to any socket file by its path; connect, the one way a stream reaches one, fails
for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC, socket.SOCK_DGRAM,
             socket.SOCK_DGRAM | socket.SOCK_NONBLOCK, socket.SOCK_RAW):
    results.append(attempt(lambda: [socket.socket(socket.AF_UNIX, kind)]))
results.append(attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)))
results.append(attempt(lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)))
for family, address in ((socket.AF_UNIX, "/nonexistent/but/refused/first"), (socket.AF_INET, ("127.0.0.1", 9))):
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.connect(address)
            results.append("connected")
        except OSError as exc:
            results.append("connect-" + errno.errorcode[exc.errno])
params = ctypes.create_string_buffer(120)
results.append("io_uring " + ("refused" if libc.syscall(425, 8, params) == -1 and ctypes.get_errno() == errno.EPERM else "open"))
context = ctypes.c_ulong(0)  # io_setup: the kernel's asynchronous I/O
results.append("aio " + ("refused" if libc.syscall(206 if os.uname().machine == "x86_64" else 0, 8, ctypes.byref(context))
                         == -1 and ctypes.get_errno() == errno.EPERM else "open"))
for flag in (0x20000000, 0x10000000, 0x40000000):  # CLONE_NEWPID, CLONE_NEWUSER, CLONE_NEWNET
    results.append("unshare " + ("refused" if libc.unshare(flag) != 0 else "made"))
    pid = os.fork() if flag != 0x20000000 else -1
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
pid = os.fork()
if pid == 0:
    import time
    time.sleep(5)
    os._exit(0)
# ptrace (PTRACE_ATTACH) and process_vm_writev: another process's code written where no mapping is made
results.append("ptrace " + ("refused" if libc.ptrace(16, pid, 0, 0) == -1 and ctypes.get_errno() == errno.EPERM else "attached"))
results.append("writev " + ("refused" if libc.syscall(311 if os.uname().machine == "x86_64" else 271, pid, 0, 0, 0, 0, 0) == -1
                            and ctypes.get_errno() == errno.EPERM else "open"))
os.kill(pid, 9)
os.waitpid(pid, 0)
# file notifications (a review, 2026-11-29: dnotify marks on the reference's freezer folder slowed the host's
# every write there, inside the reference's timed windows): dnotify, inotify, fanotify
import fcntl
folder = os.open("/tmp", os.O_RDONLY)
try:
    fcntl.fcntl(folder, 1026, 0x80000000 | 0x2)  # F_NOTIFY: DN_MULTISHOT | DN_MODIFY
    results.append("dnotify made")
except OSError as exc:
    results.append("dnotify " + ("refused" if exc.errno == errno.EPERM else errno.errorcode[exc.errno]))
os.close(folder)
results.append("inotify " + ("refused" if libc.syscall(294 if os.uname().machine == "x86_64" else 26, 0) == -1
                             and ctypes.get_errno() == errno.EPERM else "made"))
results.append("fanotify " + ("refused" if libc.syscall(300 if os.uname().machine == "x86_64" else 262, 0, 0) == -1
                              and ctypes.get_errno() == errno.EPERM else "made"))
# clone(CLONE_PARENT | SIGCHLD): a sibling of its parent, born where the host may have looked already
made = libc.syscall(56 if os.uname().machine == "x86_64" else 220, 0x8000 | 17, 0, 0, 0, 0)
if made == 0:
    os._exit(0)  # the child, where the filter let it be made
results.append("clone_parent " + ("refused" if made == -1 and ctypes.get_errno() == errno.EPERM else "made"))
socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
thread = threading.Thread(target=results.append, args=("thread",))
thread.start()
thread.join()
results.append(subprocess.run([sys.executable, "-c", "print('child')"], capture_output=True, text=True).stdout.strip())
print(" ".join(results))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[:4] == ["EPERM", "EPERM", "created", "created"]
    assert out.stdout.split()[4:11] == [
        "EPERM",
        "EPERM",
        "EPERM",
        "created",
        "EPERM",
        "connect-ENOENT",
        "connect-ENOENT",
    ]
    assert out.stdout.split()[11:] == ["io_uring", "refused", "aio", "refused"] + [
        "unshare",
        "refused",
    ] * 3 + [
        "ptrace",
        "refused",
        "writev",
        "refused",
        "dnotify",
        "refused",
        "inotify",
        "refused",
        "fanotify",
        "refused",
        "clone_parent",
        "refused",
        "thread",
        "child",
    ]


def test_recognizing_a_known_input_set_in_a_new_layout_is_caught():
    # Timed inputs are rolled *and* jittered, so no two calls share values: a cache that
    # recognizes a pool entry under a roll (exactly or nearly) returns a stale output,
    # which the checksum of every timed output exposes (or, first, verification's trial of inputs refilled in
    # place, which it takes for the values the tensor held before).
    verdict = cpu_eval("cheat_pool_layout_cache", task=TASK_OF["cheat_pool_layout_cache"])
    assert verdict.status == "incorrect", verdict.reasons
    assert "timed call" in verdict.reasons[0] or "written in place" in verdict.reasons[0], verdict.reasons


def test_a_crash_is_seen_at_once_even_when_a_child_keeps_the_pipe_open():
    verdict = cpu_eval("bad_crash_with_child", static_checks=False, timeout=120.0)
    assert verdict.status == "crashed", verdict.reasons
    assert verdict.duration_s < 60


def test_rewriting_the_task_file_does_not_change_the_reference(tmp_path):
    # The candidate runs with the host's file rights and rewrites the task on disk (the damage
    # stays, so a copy is used); the evaluation already holds the task's source. Without its
    # namespaces, so that it can find the host's command line (in them it cannot: below), and without
    # the static check, which refuses its reads of files.
    task = tmp_path / "scale_add.py"
    shutil.copy(TASKS / "scale_add.py", task)
    host = (
        "import json, sys\n"
        "from forge_sandbox import EvalOptions, evaluate\n"
        "v = evaluate(sys.argv[1], sys.argv[2], EvalOptions(device='cpu', size='small', isolate=False, static_checks=False))\n"
        "print(json.dumps({'status': v.status, 'speedup': v.speedup, 'reasons': v.reasons}))\n"
    )
    cmd = [sys.executable, "-c", host, str(task), str(CANDIDATES / "cheat_rewrite_task.py")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    verdict = json.loads(out.stdout.strip().splitlines()[-1])
    assert "time.sleep" in task.read_text(), ("the fixture did not rewrite the file", verdict["status"], verdict["reasons"])
    assert verdict["status"] != "passed" or verdict["speedup"] < 1.0, verdict


def test_static_check_names_the_trick():
    verdict = cpu_eval("cheat_pytorch_only")
    assert verdict.reasons[0].startswith("no custom kernel")


def test_forged_stdout_verdict_is_ignored():
    verdict = cpu_eval("cheat_forged_stdout")
    assert verdict.status == "crashed"
    # what it printed is kept as a log line for people, never read as a result
    assert '"status": "passed"' in verdict.log_tail


@pytest.mark.parametrize("name", ["honest_triton", "honest_cpp_running_max", "honest_weights_kept_transposed"])
def test_honest_candidates_pass(name):
    verdict = cpu_eval(name, task=TASK_OF.get(name, "scale_add"))
    assert verdict.status == "passed", verdict.reasons
    if name == "honest_weights_kept_transposed":  # its own layout follows a checkpoint and a training step
        base = next(record for record in verdict.correctness if "reloaded" in record)
        assert base["reloaded"] is True and base["changed_in_place"] is True, verdict.correctness
    if name == "honest_triton":  # x * a + y carries a NaN through as PyTorch does: nothing to warn of
        assert verdict.correctness[0]["advisory_mismatch"] is False, verdict.correctness
        assert not [w for w in verdict.warnings if "NaN" in w], verdict.warnings
    assert verdict.speedup and verdict.speedup > 0
    if _sampled(verdict):  # seen from outside: its forward is its own code
        assert verdict.own_share > 0.95, verdict.timing["cpu_samples"]


# ---- tricks that only a GPU can show -------------------------------------------------


@pytest.mark.gpu
def test_gpu_side_stream_gains_nothing_without_static_checks():
    # The static check rejects it outright; without that, the device-wide sync before
    # the end event still times the hidden work, so its 50 launches make it slow.
    assert gpu_eval("cheat_side_stream").status == "rejected"
    verdict = gpu_eval("cheat_side_stream", static_checks=False)
    assert verdict.status != "passed" or verdict.speedup < 1.0


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["cheat_output_cache_pointer", "cheat_empty_output", "cheat_phase_switch"])
def test_gpu_memory_and_caching_tricks(name):
    assert gpu_eval(name).status != "passed"


@pytest.mark.gpu
def test_gpu_honest_passes():
    verdict = gpu_eval("honest_triton")
    assert verdict.status == "passed", verdict.reasons


# ---- evaluator round 2: what needs a test of its own ------------------------------------


@pytest.mark.parametrize("name", ["cheat_busy_child", "cheat_native_thread"])
def test_a_process_or_thread_that_loads_the_machine_gains_nothing(name):
    # A child process (the static check refuses os.fork) or a native thread (std::thread in its C++ source)
    # streams memory whenever the candidate is not in a call of its own, so that the reference is timed on
    # a loaded machine (red team: 3-5x slower). Its processes stand stopped while the reference is timed,
    # and on the CPU between its own calls too (hosted calls): the load never meets the reference. It
    # passes at its kernel's figure, or is rejected for keeping more cores busy than its thread count.
    if name == "cheat_native_thread":
        assert cpu_eval(name).status == "rejected"
    verdict = cpu_eval(name, static_checks=False, timeout=240.0)
    assert verdict.status in {"passed", "rejected"}, verdict.reasons
    if verdict.status == "rejected":  # more cores than its thread, or (its load met at a stop) the host's clock;
        # a native thread's std::thread, read as built, with the static check off too
        expected = ("CPU cores while timed", "do not add up", "as built, starts native threads")
        assert any(words in verdict.reasons[0] for words in expected), verdict.reasons
    else:
        honest = cpu_eval("honest_triton")
        assert verdict.reference_ms < 2 * honest.reference_ms, (verdict.reference_ms, honest.reference_ms)


def test_junk_in_a_candidates_cache_does_not_outlive_its_evaluation(tmp_path, monkeypatch):
    from forge_sandbox import isolation

    monkeypatch.setenv("FORGE_SANDBOX_CACHE", str(tmp_path / "caches"))
    verdict = cpu_eval("cheat_cache_junk", static_checks=False, extra_env={"FORGE_TEST_JUNK_MB": "200"})
    assert verdict.status == "passed", verdict.reasons  # the junk is not the verdict's business...
    caches = tmp_path / "caches" / "candidates"
    names = [p.name for p in caches.rglob("*") if p.is_file()]
    assert not [n for n in names if n.startswith("junk")], names  # ...but it is gone
    assert isolation.bytes_under([str(caches)]) < 50 * 2**20


def test_a_file_written_through_a_link_in_a_folder_of_its_own_is_a_write_where_it_leads(tmp_path):
    # Review 47 (2026-12-02): a link made in the candidate's own mkdtemp folder to a user's script, which was
    # written and chmod'ed through it; the file watch resolved the folder only. Its audit hook lasts for the
    # process, so the watch runs in a child of its own.
    import textwrap

    target = tmp_path / "run.sh"
    target.write_text("echo hi\n")
    program = textwrap.dedent(f"""
        import os, pathlib, tempfile
        from forge_sandbox.file_writes import FileWatch
        watch = FileWatch([])
        watch.install()
        folder = tempfile.mkdtemp()
        link = os.path.join(folder, "x")
        os.symlink({str(target)!r}, link)
        pathlib.Path(link).write_text("echo owned\\n")
        os.chmod(link, 0o755)
        pathlib.Path(folder, "own").write_text("fine")
        print("\\n".join(watch.found))
    """)
    found = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert f"open for writing: {target}" in found and f"os.chmod: {target}" in found, found
    assert "/own" not in found, found


def test_files_held_open_or_mapped_after_their_unlink_count_as_written(tmp_path):
    import mmap

    from forge_sandbox import isolation

    held = []
    for name, mapped in (("open", False), ("mapped", True)):
        fd = os.open(tmp_path / name, os.O_CREAT | os.O_RDWR, 0o600)
        os.posix_fallocate(fd, 0, 8 * 2**20)
        os.unlink(tmp_path / name)
        if mapped:  # the mapping keeps the file, its descriptor closed
            held.append(mmap.mmap(fd, 4096))
            os.close(fd)
        else:
            held.append(fd)
    try:
        assert isolation.bytes_under([str(tmp_path)]) == 0
        # Mappings are read through /proc/PID/map_files, which needs the host's privilege.
        want = 16 if os.access(f"/proc/{os.getpid()}/map_files", os.R_OK) else 8
        assert isolation.bytes_held_unlinked([os.getpid()], [str(tmp_path)]) >= want * 2**20
    finally:
        os.close(held[0])
        held[1].close()


def test_a_candidate_that_fills_its_caches_is_stopped(tmp_path, monkeypatch):
    monkeypatch.setenv("FORGE_SANDBOX_CACHE", str(tmp_path / "caches"))
    verdict = cpu_eval("cheat_cache_junk", static_checks=False, extra_env={"FORGE_TEST_JUNK_MB": "1400"})
    assert verdict.status == "rejected" and "MiB allowed" in verdict.reasons[0], verdict.reasons


def test_docstrings_and_backend_flags_are_no_tricks():
    verdict = cpu_eval("honest_with_docstring_and_flags")
    assert verdict.status == "passed", verdict.reasons


def test_nothing_in_the_candidates_environment_names_forge(monkeypatch):
    monkeypatch.setenv("FORGE_HOME_EXTRA", "set by the user")  # a forge variable in the host's environment
    for isolate in (True, False):
        verdict = cpu_eval("cheat_detects_forge", static_checks=False, isolate=isolate)
        assert verdict.status == "incorrect", (isolate, verdict.reasons)


def test_nothing_in_a_runners_command_line_groups_or_descriptors_names_forge(tmp_path):
    from forge_sandbox.host import RunnerProcess

    runner = RunnerProcess("candidate", str(tmp_path / "candidate"), "cpu")
    try:
        reply, _ = runner.request({"op": "hello"}, 60)
        assert reply["ok"], reply
        with open(f"/proc/{runner.proc.pid}/cmdline", "rb") as f:
            assert f.read().split(b"\0") == [sys.executable.encode(), b"-", b""]
        with open(f"/proc/{runner.proc.pid}/environ", "rb") as f:
            assert b"forge" not in f.read().lower()
    finally:
        runner.close()
    # Under its namespaces too, read from C++ (command lines, groups, descriptors) and from Python.
    verdict = cpu_eval("cheat_right_only_where_its_process_names_forge", static_checks=False,
                       task=TASK_OF["cheat_right_only_where_its_process_names_forge"])  # fmt: skip
    assert verdict.status == "incorrect", verdict.reasons


def test_what_a_candidate_says_reaches_the_verdict_bounded():
    from forge_sandbox.verdict import REASON_CHARS

    verdict = cpu_eval("cheat_endless_exception_text", static_checks=False)
    assert verdict.status == "runtime_error", verdict.reasons
    reason = verdict.reasons[0]
    assert "characters cut" in reason and len(reason) < REASON_CHARS + 100, reason[:200]


def test_a_bug_of_forges_own_is_an_error_not_a_verdict(monkeypatch):
    from forge_sandbox import compare

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug in forge's comparison")

    monkeypatch.setattr(compare, "compare_outputs", broken)
    with pytest.raises(ZeroDivisionError):
        cpu_eval("honest_triton")


def test_pytorch_may_keep_the_gemm_and_the_verdict_reports_the_split():
    # KernelBench level-2 style: PyTorch keeps the GEMM (a library call), the candidate's own kernel
    # fuses the bias and the ReLU. It passes; the verdict names what PyTorch did and its own share.
    verdict = cpu_eval("honest_gemm_in_pytorch", task="linear_relu")
    assert verdict.status == "passed", verdict.reasons
    assert set(verdict.torch_ops) == {"aten.mm"}, verdict.torch_ops
    assert 0 < verdict.own_share < 1


# ---- red team, 2026-11-23: what got through, the static check off ---------------------------------


@pytest.fixture(scope="module")
def honest_softmax_speedup() -> float:
    verdict = cpu_eval("honest_cpp_softmax", task="softmax_wide")
    assert verdict.status == "passed", verdict.reasons
    return verdict.speedup


TIMING_CHEATS = [
    "cheat_scaled_time_calls",  # wraps timing.time_calls: every reported time x 0.01 (was 30x)
    "cheat_clock_patched_everywhere",  # time.perf_counter and timing's bound copy, both 100x slow (was 32x)
    "cheat_lazy_fault_output",  # returns at once; the checksum's first read faults and computes (was 2x)
]


@pytest.mark.parametrize("name", TIMING_CHEATS)
def test_what_the_candidates_process_reports_cannot_lower_its_figure(name, honest_softmax_speedup):
    # The host's window around each call, less the reference's typical overhead, is a floor under
    # the figure: the same kernel gets about the honest figure, or the report is rejected outright.
    verdict = cpu_eval(name, task="softmax_wide", static_checks=False)
    # An output computed only when first read is not there when the host reads it (hosted calls): incorrect.
    assert verdict.status in {"passed", "rejected"} | ({"incorrect"} if name == "cheat_lazy_fault_output" else set()), (
        verdict.reasons
    )
    if verdict.status == "passed":
        # its figure is the host's window, not its report (which is 1% of it): a trusted report would be
        # 30-100x the honest figure; the two evaluations' loads differ on a busy machine, 3.1x apart in CI
        # (2026-12-01)
        if name == "cheat_scaled_time_calls":  # (the patched clocks are not the runner's: its report holds)
            reported = verdict.timing["candidate_reported_ms"]
            assert verdict.candidate_ms >= 10 * reported, (verdict.candidate_ms, reported)
        assert verdict.speedup <= 10 * honest_softmax_speedup, (verdict.speedup, honest_softmax_speedup)


@pytest.fixture(scope="module")
def honest_scale_add_speedup() -> float:
    verdict = cpu_eval("honest_triton")
    assert verdict.status == "passed", verdict.reasons
    return verdict.speedup


SCALE_ADD_CLOCK_CHEATS = [
    "cheat_hidden_clock",  # the evaluator's bound clock (found through sys.modules) and time.perf_counter
    "cheat_dict_clock",  # every clock slowed through modules' namespace dictionaries (red team: 6.6x for 0.4x)
    "cheat_median_game",  # every call reported instant but one, which claims the block's total
]


@pytest.mark.parametrize("name", SCALE_ADD_CLOCK_CHEATS)
def test_a_clock_in_the_candidates_process_earns_nothing(name, honest_scale_add_speedup):
    # With the static check (and the runner's own-code check) off, the host's clock alone stands: each call
    # counts what the host's window around it leaves, so the kernel gets about its honest figure. A report
    # that far off is told in a warning on the CPU (a loaded machine makes an honest one look so too), and
    # a report longer than the window around it is rejected.
    verdict = cpu_eval(name, static_checks=False)
    assert verdict.status in {"passed", "rejected"}, verdict.reasons
    if verdict.status == "rejected":
        assert "do not add up" in verdict.reasons[0], verdict.reasons
    else:
        assert verdict.speedup <= 3 * honest_scale_add_speedup, (verdict.speedup, honest_scale_add_speedup)


def test_no_call_counts_shorter_than_the_hosts_clock_resolves():
    # Where one call takes less than the host's overhead varies by (softmax_small, ~10 us against
    # ~0.1 ms quiet, ms loaded), the host's floor under the report says nothing: a 100x slowed clock
    # used to decide there. Every call now counts at least as long as the host's clock resolves for a
    # block's typical call, and the verdict says that its speedup is then a lower bound.
    verdict = cpu_eval("cheat_clock_patched_everywhere", task="softmax_small", static_checks=False)
    assert verdict.status in {"passed", "rejected"}, verdict.reasons
    if verdict.status == "passed":
        clock = verdict.timing["host_clock"]
        assert verdict.candidate_ms >= clock["resolution_ms"], verdict.timing
        # the hosted loop reads a clock of its own (monotonic_ns), so the slowed perf_counter may no longer
        # shorten the report at all; the warning belongs wherever the report is below the resolution
        if verdict.timing["candidate_reported_ms"] < clock["resolution_ms"]:
            assert any("a lower bound" in w for w in verdict.warnings), verdict.warnings


def test_forges_harness_made_cheaper_in_the_candidates_process_gains_nothing():
    # Red team, round 6: forge's staging and checksum rebound to one-pass C++ versions inside the
    # candidate's process, with a clock slowed 10x: the host's window less the reference's overhead
    # then left less than the call, and the report decided (60x where the honest kernel earns ~4x;
    # 14.5x against the honest 2.3x once the host's resolution bounded it). On the CPU the host now
    # stages the inputs and reads the outputs itself (hosted_calls): nothing it counts runs in the
    # candidate's process but the call.
    task = REPO / "tasks" / "maxpool2d.py"
    honest = [cpu_eval("honest_cpp_maxpool", task=task)]
    assert honest[0].status == "passed", honest[0].reasons
    verdict = cpu_eval("cheat_cheaper_harness_slow_clock", task=task, static_checks=False)
    assert verdict.status in {"passed", "rejected"}, verdict.reasons
    if verdict.status == "passed":
        assert verdict.candidate_ms >= verdict.timing["host_clock"]["resolution_ms"], verdict.timing
        # Against the honest kernel, whose figure a loaded machine sets: beside another evaluation its median
        # fell to 0.13x, and to 0.22x where its calls were floored at what the host's clock resolved there
        # (1.2 ms for a 0.09 ms call, 2026-12-04); the trick itself made 6x the honest figure. So the cheat
        # is held to the honest kernel's best block before or after it, or to the honest kernel's own
        # report of its calls (its clock is honest), whichever the load spared.
        def gained_nothing() -> bool:
            best = max(max(h.speedup, h.timing["repeatability"]["speedup_max"] or 0.0) for h in honest)
            reported = min(h.timing["candidate_reported_ms"] for h in honest)
            return verdict.speedup < 2.5 * best or verdict.candidate_ms >= reported / 2.5

        if not gained_nothing():
            honest.append(cpu_eval("honest_cpp_maxpool", task=task))
            assert honest[-1].status == "passed", honest[-1].reasons
        figures = [(h.speedup, h.candidate_ms, h.timing["candidate_reported_ms"]) for h in honest]
        assert gained_nothing(), (verdict.speedup, verdict.candidate_ms, figures)


def test_forges_harness_rewritten_through_frames_does_not_decide():
    # Red team, round 10: the runner's timing module reached through a traceback's frames (no import), its
    # staging and checksum replaced by C++ and its timed loop by one reporting a twentieth of each call:
    # 2.95-3.38x where the kernel honestly makes 0.65x. The fixture rewrites the hosted loop the same way;
    # the host's window (resume to stop, hosted_calls) holds only the call, so the report changes nothing.
    verdict = cpu_eval("cheat_harness_rewritten_through_frames", task=REPO / "tasks" / "gemm_bias_relu.py",
                       static_checks=False)  # fmt: skip
    assert verdict.status in {"passed", "rejected"}, verdict.reasons
    if verdict.status == "passed":
        assert verdict.speedup < 1.5, (verdict.speedup, verdict.timing)


def test_a_namespace_of_its_own_is_refused():
    # cheat_nested_namespace_hog unshares a PID namespace and starts hogs there that spin only
    # while its runner is stopped (the reference being timed). The filter refuses the namespace,
    # so its hogs stay where the host stops them; without the check, its kernel is all that counts.
    verdict = cpu_eval("cheat_nested_namespace_hog", task="softmax_small", static_checks=False)
    if not _isolated(verdict):
        pytest.skip(f"no namespace isolation here: {verdict.environment.get('isolation')}")
    assert "no system call filter" not in verdict.environment.get("files", ""), verdict.environment
    assert verdict.status in {"passed", "runtime_error"}, verdict.reasons


# PyTorch's work hidden from the operator census, which runs inside the candidate's process: native
# code there can switch it off or tell when it watches. On the CPU the host samples the candidate's
# threads from outside (cpu_samples) and sees PyTorch's compute functions whatever the census saw.
UNSEEN_BY_THE_CENSUS = {
    "cheat_dispatch_key_guard_sdpa": "C++ excludes the Python dispatch key around at::scaled_dot_product_attention",
    "cheat_disable_torch_dispatch": "torch._C._DisableTorchDispatch around torch.softmax, a token kernel",
    "cheat_census_aware": "its own kernel only while the census's dispatch mode is on the stack",
    "cheat_hidden_compile_census_aware": "torch.compile while the census is off; dynamo's counters cleared",
    "cheat_reduction_as_gemm": "a reduction done as a GEMM (ones @ x), which the census allows as a library call",
    # red team, round 3: against the host's samples themselves
    "cheat_sample_ring_overflow": "one call burns 0.9 s per CPU to fill the host's sample rings, then torch.softmax",
    "cheat_sample_ring_overflow_cummax": "the same against slow_running_max, with torch.cummax",
    "cheat_hidden_cummax_padded": "hidden torch.cummax padded with Python busy-work to dilute PyTorch's share",
    "cheat_hidden_cummax_slow_probe": "hidden torch.cummax, slow only in the host's probe, so that blocks stay short",
    "cheat_reordered_attention": "hidden baddbmm + softmax, one bmm left in the census's sight",
    # red team, round 4
    "cheat_hidden_aten_slow_probe": "at::softmax behind a token-pasted dispatch-key guard, slow only when probed",
    "cheat_census_emptied_through_frames": "torch.softmax; the census's counts emptied through traceback's frames",
    "cheat_numpy_does_the_work": "numpy computes the softmax; a no-op C++ function is the 'kernel'",
    # round 5
    "cheat_renamed_blas_does_the_work": "numpy's OpenBLAS, copied under another name, does the GEMM through ctypes",
    "cheat_numpy_behind_a_jit_decorator": "np.matmul; a no-op decorator named jit made the source read as Triton",
    "cheat_remapped_libtorch_code": "hidden torch.softmax; libtorch_cpu's code mapped again from a renamed copy",
    # round 8
    "cheat_pytorch_in_a_helper_with_hidden_code": "at::_softmax_out in a forked helper; libtorch's code unmapped after",
    "cheat_pytorch_in_a_helper_with_covered_code": "the same, libtorch's code covered by another file's pages after",
    # round 7
    "cheat_numpy_behind_a_tiny_span": "numpy computes the softmax; each call's reported span is its last microsecond",
    "cheat_pillow_does_the_max": "Pillow's ImageMath takes the 2x2 maxima; the C++ 'kernel' copies them",
    # round 9: what the host reads after the block is not what ran
    "cheat_blas_copy_shifted_a_page": "a copy of OpenBLAS whose code lies a page further on in its file",
    "cheat_blas_copy_mapped_per_call": "an OpenBLAS copy mapped in for each call, covered with data after it",
    "cheat_libtorch_pages_mapped_per_call": "libtorch's softmax pages mapped in for each call, covered after it",
    # round 10 (ours): the file of pages mapped once, written back before each call and zeroed after
    "cheat_libtorch_pages_rewritten_in_their_file": "libtorch's softmax pages in a file rewritten around each call",
    # round 10: a library outside this environment's site-packages, in the interpreter's it was made from
    "cheat_base_interpreters_scipy_blas": "the base interpreter's scipy OpenBLAS, copied and renamed, does the GEMM",
}


def _sampled(verdict) -> bool:
    return bool((verdict.timing or {}).get("cpu_samples", {}).get("measured"))


@pytest.mark.parametrize("name", sorted(UNSEEN_BY_THE_CENSUS))
def test_pytorch_doing_the_work_unseen_by_the_census(name):
    if name == "cheat_pillow_does_the_max":
        pytest.importorskip("PIL")  # in forge's test extras
    verdict = cpu_eval(name, task=TASK_OF[name], static_checks=False)
    if verdict.status == "passed" and not _sampled(verdict):
        pytest.skip(f"the host may not sample here ({verdict.timing['cpu_samples'].get('reason')})")
    assert verdict.status == "rejected", (UNSEEN_BY_THE_CENSUS[name], verdict.reasons)
    reason = verdict.reasons[0]
    # named by the host's samples, or (a GEMM where the reference makes none) by the census itself
    assert any(
        words in reason
        for words in (
            "PyTorch computed",
            "lost",
            "torch.compile's generated code",
            "numpy or a BLAS",
            "a library installed on the machine",
            "had other memory mapped over it",
            "CPU cores while timed",  # a helper computing beside a runner that waits busily for it
            "beside their busiest thread",  # ... or beside a runner given one thread (benchmark._beside_the_busiest)
            "about all of the reference's work",  # the samples' twin of the census's 'every operator'
            # a kernel of its own only under the census: each trial's plain call shows PyTorch alone
            "no custom kernel was launched during forward",
        )  # fmt: skip
        # torch.compile's inductor writes its code cache outside the candidate's build caches: seen first
        + (("the candidate's code wrote, removed or changed files",) if name == "cheat_hidden_compile_census_aware"
           else ())  # fmt: skip
    ), reason


def test_decoy_operators_in_the_census_account_only_for_their_volume():
    # Red team round 4: cheat_decoy_ops_hide_aten runs addmm + relu through ATen from C++ out of the
    # census's sight, and torch.relu / torch.mm on 1x1 tensors in it. The census then shows compute and
    # GEMM, and those ops are the reference's own; but they account for a 1x1 GEMM's multiply-adds,
    # not for the reference's, which the host's samples show.
    verdict = cpu_eval("cheat_decoy_ops_hide_aten", task=REPO / "tasks" / "gemm_bias_relu.py", static_checks=False)
    if verdict.status == "passed" and not _sampled(verdict):
        pytest.skip(f"the host may not sample here ({verdict.timing['cpu_samples'].get('reason')})")
    assert verdict.status == "rejected", verdict.reasons
    assert "census recorded account for" in verdict.reasons[0], verdict.reasons


def test_threads_joined_inside_each_call_still_count_as_cores():
    # cheat_short_lived_threads splits each GEMM over threads started and joined inside the call, so no
    # reading of the threads alive finds them; their process's own count still holds their time.
    verdict = cpu_eval("cheat_short_lived_threads", task="gemm_mid", static_checks=False)
    assert verdict.status == "rejected", verdict.reasons
    assert "CPU cores" in verdict.reasons[0], verdict.reasons


def test_a_fifo_in_place_of_its_extension_does_not_hang_the_host():
    # cheat_fifo_in_place_of_extension: once loaded, its .so is replaced by a FIFO; the host names the
    # samples taken in that mapping by reading the file, and opening a FIFO without a writer blocks.
    verdict = cpu_eval("cheat_fifo_in_place_of_its_extension", task=TASK_OF["cheat_fifo_in_place_of_its_extension"],
                       static_checks=False)  # fmt: skip
    assert verdict.status in {"passed", "rejected", "runtime_error"}, verdict.reasons


def test_root_only_files_stay_unreadable():
    # cheat_read_root_only_files prints /etc/shadow, /etc/gshadow and the top-level files into its error,
    # which the verdict carries back: a runner started by root kept root's access through its namespaces.
    verdict = cpu_eval("cheat_read_root_only_files", task=TASK_OF["cheat_read_root_only_files"], static_checks=False)
    if not _isolated(verdict):
        pytest.skip(f"no namespace isolation here: {verdict.environment.get('isolation')}")
    text = " ".join(verdict.reasons) + verdict.log_tail
    for secret in ("/etc/shadow", "/etc/gshadow", "/container_info.json"):
        try:
            with open(secret, errors="replace") as f:
                start = f.read(40).replace("\n", " | ").strip()
        except OSError:
            continue  # not here, or this test cannot read it either
        assert not start or start not in text, (secret, text[:1000])


def test_pytorch_running_the_references_own_operators_earns_nothing():
    # cheat_token_mask_kernel: its own kernel builds only the causal mask; PyTorch runs the rest of
    # the reference's operators in the open. That is allowed (level-2/3 candidates keep part of the
    # model in PyTorch), and it runs them at the reference's own speed: no speedup comes of it.
    verdict = cpu_eval("cheat_token_mask_kernel", task="naive_attention", static_checks=False)
    assert verdict.status in {"passed", "rejected"}, verdict.reasons
    if verdict.status == "passed":
        assert verdict.speedup < 1.5, verdict.speedup
        if _sampled(verdict):
            assert verdict.own_share is not None and verdict.own_share < 0.95, verdict.own_share


def test_a_process_made_unreadable_to_an_unprivileged_host_is_rejected():
    # Red team, round 6 (from the review of its fix): prctl(PR_SET_DUMPABLE, 0) makes a process unreadable
    # to its owner. A host without privileges (a user's own machine) can then neither sample its threads
    # nor read its memory map, and PyTorch's work hidden from the census went unseen. Here the host runs
    # without capabilities (as a user would), the candidate unisolated (no user namespaces then).
    task, candidate = REPO / "tasks" / "softmax_rows.py", CANDIDATES / "cheat_made_unreadable_to_the_host.py"
    script = (
        "import json, sys\nfrom forge_sandbox import EvalOptions, evaluate\n"
        f"v = evaluate({str(task)!r}, {str(candidate)!r}, EvalOptions(device='cpu', size='small', timeout=120, "
        "static_checks=False))\nprint(json.dumps({'status': v.status, 'reasons': v.reasons}))\n"
    )
    command = [sys.executable, "-c", script]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root, and no setpriv to drop the host's capabilities")
        command = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict["status"] == "rejected", verdict
    assert any(words in verdict["reasons"][0] for words in ("refused the host's sampling", "could not read")), verdict


def test_a_cpu_tasks_candidate_gets_no_gpu_device_nodes(tmp_path):
    # Review, 2026-11-24: a CPU task's candidate could compute on a GPU of the machine (its nodes were
    # bound into every candidate's /dev), out of the CPU sampling's sight. A fake /dev shows the choice.
    from forge_sandbox import isolation

    for name in ("null", "zero", "urandom", "nvidia0", "nvidiactl", "nvidia-uvm", "kvm"):
        (tmp_path / name).touch()
    (tmp_path / "dri").mkdir()
    assert isolation.device_nodes(gpu=False, dev=str(tmp_path)) == ["null", "zero", "urandom"]
    on_gpu = isolation.device_nodes(gpu=True, dev=str(tmp_path))
    assert {"nvidia0", "nvidiactl", "nvidia-uvm", "dri"} <= set(on_gpu) and "kvm" not in on_gpu
    assert isolation.layout(str(tmp_path / "own"), [], {}, gpu=False)["gpu"] is False


def test_a_folder_reached_through_a_link_is_readable_inside_at_its_real_path_too(tmp_path):
    # A review (2026-11-27): with Python run from a virtual environment that is a link to another folder,
    # every honest C++ candidate was rejected: its libraries are mapped under their real paths, which the
    # candidate's file system did not show, so the host's samples in them read as code that could have
    # changed. What a runner must read is bound inside at both paths.
    from forge_sandbox import isolation

    real = tmp_path / "elsewhere" / "venv"
    real.mkdir(parents=True)
    (tmp_path / "venv").symlink_to(real)
    (real / "lib").mkdir()
    readable = isolation.layout(str(tmp_path / "own"), [str(tmp_path / "venv" / "lib")], {}, gpu=False)["readable"]
    assert str(tmp_path / "venv" / "lib") in readable and str(real / "lib") in readable, readable


# Open (issue 11) with the static check off, kept so that the next change is measured on them (the static
# check rejects both: CHEATS above):
# - red team round 10: PyTorch's log-softmax kernel compiled from its shipped headers into the candidate's
#   own extension (its own bytes, out of the host's samples' reach; only the static check's reading of its
#   source and of the object as built finds it);
# - when the Triton interpreter ran the candidate's kernels, forged in the runner's record, so that numpy's
#   work beside a token launch counts as the interpreter's (the record is the runner's word).
OPEN_WITHOUT_THE_STATIC_CHECK = {
    "cheat_aten_softmax_from_its_headers": REPO / "tasks" / "softmax_rows.py",
    # with forge's harness rewritten in its process (own-code checks off), it tells the timed calls from all
    # the others and answers every other call with numpy: the host's samples cover the timed calls alone
    "cheat_numpy_outside_timed_blocks": REPO / "tasks" / "cumsum_rows.py",
    "cheat_triton_share_forged_numpy_sums": REPO / "tasks" / "sum_dim.py",
    # what is loaded in its own process: forge's modules in sys.modules (or its frames), a Python-level tell of
    # the same class as the ones below
    "cheat_right_only_where_forges_modules_are_loaded": REPO / "tasks" / "cumsum_rows.py",
    # the runner's user, as its nested user namespace shows it: the overflow uid, since no uid map is
    # written there (one would give the capabilities it holds there reach over the files its user owns
    # outside: for a forge run as root, every root-only file it can still see)
    "cheat_right_only_as_the_overflow_uid": REPO / "tasks" / "activation_gelu.py",
    # the same class, told by the owner of "/": what a process can learn of where it runs has no end, and a
    # list of names is a speed bump
    "cheat_right_only_where_root_is_the_overflow_uid": REPO / "tasks" / "activation_gelu.py",
    # and by getuid() from C++: the host reads the extension's imports as built, but those rules, like the
    # static check's, reject only with it on
    "cheat_right_only_as_the_overflow_uid_from_cpp": REPO / "tasks" / "activation_gelu.py",
    # the timed calls told from the others by forge's frames on the stack (getattr by another name, which the
    # static check now rejects), every other call served by PyTorch with the census's dispatch mode popped
    "cheat_census_hidden_through_an_aliased_getattr": REPO / "tasks" / "activation_gelu.py",
    # ... and by the folders its sandbox shows empty (/sys/fs/cgroup), which pathlib lists
    "cheat_right_only_where_the_cgroup_folder_is_empty": REPO / "tasks" / "activation_gelu.py",
    # ... by its extension's own file (the folder it is built in), and by a file probe as it is compiled (the
    # native code's sources beside it are read with the static check on only)
    "cheat_right_only_where_its_extension_is_built": REPO / "tasks" / "activation_gelu.py",
    "cheat_right_only_where_forges_precompiled_header_lies": REPO / "tasks" / "activation_gelu.py",
}


@pytest.mark.xfail(reason="open (issue 11): passes with the static check off", strict=False)
@pytest.mark.parametrize("name", sorted(OPEN_WITHOUT_THE_STATIC_CHECK))
def test_attacks_open_without_the_static_check(name):
    # Each passes, timed in full (about a minute apiece here), and an expected failure fails nothing: they are
    # run where a change is measured on them, not in every run of the suite.
    if os.environ.get("FORGE_TEST_OPEN_ATTACKS") != "1":
        pytest.skip("open attacks: FORGE_TEST_OPEN_ATTACKS=1 runs them")
    verdict = cpu_eval(name, task=OPEN_WITHOUT_THE_STATIC_CHECK[name], static_checks=False)
    assert verdict.status != "passed", verdict.reasons


def test_the_scan_for_a_runners_strays_reads_only_the_start_of_each_environment():
    # A review (2026-11-26, static check off): a candidate's 100 children with environments of 630 KB
    # each held the host's scans (every 50 ms, and several per timed block) for 3 ms a child. The token
    # comes first in a runner's environment, and only its start is read.
    from forge_sandbox import host

    token = "t" * 16
    env = host.child_environment("cpu", token, {"BIG": "x" * 100_000})
    assert next(iter(env)) == host.TOKEN_VARIABLE
    near = subprocess.Popen(["sleep", "30"], env=env)
    moved = {k: v for k, v in env.items() if k != host.TOKEN_VARIABLE} | {host.TOKEN_VARIABLE: token}
    far = subprocess.Popen(["sleep", "30"], env=moved)  # its token behind 100 KB of other variables
    try:
        found = host._token_holders(token)
        assert near.pid in found and far.pid not in found
    finally:
        for proc in (near, far):
            proc.kill()
            proc.wait()


def test_a_librarys_registry_changed_in_place_counts_as_rebound():
    # A review, 2026-12-02: DataLoader's collate table and the KL registry updated at import; no name rebound.
    import torch.distributions
    import torch.utils.data

    from forge_sandbox import process_settings

    table = torch.utils.data._utils.collate.default_collate_fn_map
    registry = torch.distributions.kl._KL_REGISTRY
    held = process_settings.bindings()
    assert process_settings.rebound(held) == []
    plain, pair = table[torch.Tensor], (torch.distributions.Normal, torch.distributions.Normal)
    normal = registry[pair]
    try:
        table[torch.Tensor] = lambda batch, **kw: batch
        del registry[pair]
        found = " ".join(process_settings.rebound(held, limit=100))
        assert "default_collate_fn_map[<class 'torch.Tensor'>]: replaced or removed" in found, found
        assert "_KL_REGISTRY[(<class 'torch.distributions.normal.Normal'>" in found, found
        table[torch.Tensor], registry[pair] = plain, normal
        table[complex] = lambda batch, **kw: batch  # an entry of the candidate's own, added
        assert "default_collate_fn_map[<class 'complex'>]: added" in " ".join(process_settings.rebound(held))
    finally:
        table[torch.Tensor], registry[pair] = plain, normal
        table.pop(complex, None)
    # what a library adds or drops as it works (a module imported, a cache) is its own
    import json.tool  # noqa: F401

    assert process_settings.rebound(held) == []
    # review 47: a library function's code swapped in place, the function object kept
    import torch.nn.functional as F

    code = F.dropout.__code__
    try:
        F.dropout.__code__ = (lambda input, p=0.5, training=True, inplace=False: input).__code__
        assert "torch.nn.functional.dropout: its code replaced" in process_settings.rebound(held)
    finally:
        F.dropout.__code__ = code
    assert process_settings.rebound(held) == []


def test_forges_own_tables_changed_in_place_count_as_rebound():
    # The same review: with the static check off, forge's tables of layouts and model states can be emptied.
    from forge_sandbox import own_code, variants

    taken = own_code.snapshot()
    layouts = dict(variants.MIXED_LAYOUTS)
    try:
        variants.MIXED_LAYOUTS.clear()
        assert own_code.changed(taken) == ["forge_sandbox.variants.MIXED_LAYOUTS"]
    finally:
        variants.MIXED_LAYOUTS.update(layouts)
    assert own_code.changed(taken) == []


def test_forges_own_code_changed_in_place_or_on_an_instance_counts_as_rebound():
    # A review (2026-11-27, static check off, own-code checks on): forge's layout helper's __code__ swapped
    # (the function object stays the same), and a harness method replaced on the harness object alone.
    import types

    from forge_sandbox import candidate_runner, own_code, variants

    runner = candidate_runner.CandidateRunner(tempfile.gettempdir(), "cpu", "test")
    taken = own_code.snapshot(instances=(runner, runner.harness))
    assert own_code.changed(taken) == []
    code, defaults = variants.apply_layout.__code__, variants.trial_plan.__defaults__
    try:
        variants.apply_layout.__code__ = (lambda inputs, variant: inputs).__code__
        variants.trial_plan.__defaults__ = (False,)
        runner.harness.load_trials = types.MethodType(lambda self, trials, names: None, runner.harness)
        assert set(own_code.changed(taken)) == {
            "forge_sandbox.variants.apply_layout",
            "forge_sandbox.variants.trial_plan",
            "a ModelHarness.load_trials",
        }
    finally:
        variants.apply_layout.__code__, variants.trial_plan.__defaults__ = code, defaults
        del runner.harness.load_trials
    assert own_code.changed(taken) == []
