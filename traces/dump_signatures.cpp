// FlashInfer fb28d7242b35 signatures of the APIs the dump importer reads (dump_signatures.hpp). Transcribed
// from the sources (flashinfer/pod.py, prefill.py, decode.py) and checked against every dump's own
// function_signature when it is read.
#include "traces/dump_signatures.hpp"

#include <stdexcept>

namespace podcheck::dump {

namespace {

constexpr ParamKind P = ParamKind::positional, V = ParamKind::var_positional, K = ParamKind::keyword_only,
                    KW = ParamKind::var_keyword;

const Signature kPodInit{{{"self", nullptr, P}, {"float_workspace_buffer", nullptr, P}, {"kv_layout", "'NHD'", P},
                          {"use_cuda_graph", "False", P}, {"paged_kv_indptr_buffer", "None", P},
                          {"paged_kv_indices_buffer", "None", P}, {"paged_kv_last_page_len_buffer", "None", P},
                          {"jit_args", "None", P}}};

const Signature kPodPlan{{{"self", nullptr, P}, {"indptr", nullptr, P}, {"indices", nullptr, P},
                          {"last_page_len", nullptr, P}, {"num_qo_heads", nullptr, P}, {"num_kv_heads", nullptr, P},
                          {"head_dim", nullptr, P}, {"page_size", nullptr, P}, {"pos_encoding_mode", "'NONE'", P},
                          {"window_left", "-1", P}, {"q_data_type", "'float16'", P}, {"kv_data_type", "None", P},
                          {"data_type", "None", P}, {"sm_scale", "None", P}, {"rope_scale", "None", P},
                          {"rope_theta", "None", P}, {"non_blocking", "True", P}}};

const Signature kPodRun{{{"self", nullptr, P}, {"q_p", nullptr, P}, {"k_p", nullptr, P}, {"v_p", nullptr, P},
                         {"q_d", nullptr, P}, {"paged_kv_cache_d", nullptr, P}, {"custom_mask_p", "None", P},
                         {"packed_custom_mask_p", "None", P}, {"causal_p", "False", P}, {"kv_layout_p", "'NHD'", P},
                         {"pos_encoding_mode_p", "'NONE'", P}, {"sm_scale_p", "None", P}, {"window_left_p", "-1", P},
                         {"rope_scale_p", "None", P}, {"rope_theta_p", "None", P}, {"return_lse_p", "False", P},
                         {"custom_mask_d", "None", P}, {"packed_custom_mask_d", "None", P}, {"causal_d", "False", P},
                         {"kv_layout_d", "'NHD'", P}, {"pos_encoding_mode_d", "'NONE'", P}, {"sm_scale_d", "None", P},
                         {"window_left_d", "-1", P}, {"rope_scale_d", "None", P}, {"rope_theta_d", "None", P},
                         {"q_scale", "None", P}, {"k_scale", "None", P}, {"v_scale", "None", P},
                         {"return_lse_d", "False", P}, {"use_fp16_qk_reduction", "False", P},
                         {"enable_pdl", "None", P}, {"args", nullptr, V}}};

const Signature kBatchPodInit{{{"self", nullptr, P}, {"float_workspace_buffer", nullptr, P}, {"kv_layout", "'NHD'", P}}};

const Signature kBatchPodPlan{{{"self", nullptr, P}, {"qo_indptr_p", nullptr, P}, {"kv_indptr_p", nullptr, P},
                               {"kv_indices_p", nullptr, P}, {"last_page_len_p", nullptr, P}, {"qo_indptr_d", nullptr, P},
                               {"kv_indptr_d", nullptr, P}, {"kv_indices_d", nullptr, P}, {"last_page_len_d", nullptr, P},
                               {"num_qo_heads", nullptr, P}, {"num_kv_heads", nullptr, P}, {"head_dim", nullptr, P},
                               {"page_size", nullptr, P}, {"pos_encoding_mode", "'NONE'", P}, {"window_left", "-1", P},
                               {"q_data_type", "'float16'", P}, {"kv_data_type", "None", P}, {"data_type", "None", P},
                               {"sm_scale", "None", P}, {"rope_scale", "None", P}, {"rope_theta", "None", P},
                               {"non_blocking", "True", P}}};

const Signature kBatchPodRun{{{"self", nullptr, P}, {"q_p", nullptr, P}, {"paged_kv_cache_p", nullptr, P},
                              {"q_d", nullptr, P}, {"paged_kv_cache_d", nullptr, P}, {"custom_mask_p", "None", P},
                              {"packed_custom_mask_p", "None", P}, {"causal_p", "False", P}, {"q_scale", "None", P},
                              {"k_scale", "None", P}, {"v_scale", "None", P}, {"return_lse", "False", P},
                              {"use_fp16_qk_reduction", "False", P}, {"enable_pdl", "None", P}}};

const Signature kSinglePrefill{{{"q", nullptr, P}, {"k", nullptr, P}, {"v", nullptr, P}, {"scale_q", "None", P},
                                {"scale_k", "None", P}, {"scale_v", "None", P}, {"o_dtype", "None", P},
                                {"custom_mask", "None", P}, {"packed_custom_mask", "None", P}, {"causal", "False", P},
                                {"kv_layout", "'NHD'", P}, {"pos_encoding_mode", "'NONE'", P},
                                {"use_fp16_qk_reduction", "False", P}, {"sm_scale", "None", P},
                                {"window_left", "-1", P}, {"logits_soft_cap", "None", P}, {"rope_scale", "None", P},
                                {"rope_theta", "None", P}, {"backend", "'auto'", P}, {"return_lse", "False", P},
                                {"kv_cache_sf", "None", P}, {"k_scale", "None", P}, {"v_scale", "None", P}}};

const Signature kPrefillInit{{{"self", nullptr, P}, {"float_workspace_buffer", nullptr, P}, {"kv_layout", "'NHD'", P},
                              {"use_cuda_graph", "False", P}, {"qo_indptr_buf", "None", P},
                              {"paged_kv_indptr_buf", "None", P}, {"paged_kv_indices_buf", "None", P},
                              {"paged_kv_last_page_len_buf", "None", P}, {"custom_mask_buf", "None", P},
                              {"mask_indptr_buf", "None", P}, {"backend", "'auto'", P}, {"jit_args", "None", P},
                              {"jit_kwargs", "None", P}}};

const Signature kPrefillPlan{{{"self", nullptr, P}, {"qo_indptr", nullptr, P}, {"paged_kv_indptr", nullptr, P},
                              {"paged_kv_indices", nullptr, P}, {"paged_kv_last_page_len", nullptr, P},
                              {"num_qo_heads", nullptr, P}, {"num_kv_heads", nullptr, P}, {"head_dim_qk", nullptr, P},
                              {"page_size", nullptr, P}, {"head_dim_vo", "None", P}, {"custom_mask", "None", P},
                              {"packed_custom_mask", "None", P}, {"causal", "False", P},
                              {"pos_encoding_mode", "'NONE'", P}, {"use_fp16_qk_reduction", "False", P},
                              {"sm_scale", "None", P}, {"window_left", "-1", P}, {"logits_soft_cap", "None", P},
                              {"rope_scale", "None", P}, {"rope_theta", "None", P}, {"q_data_type", "'float16'", P},
                              {"kv_data_type", "None", P}, {"o_data_type", "None", P}, {"non_blocking", "True", P},
                              {"prefix_len_ptr", "None", P}, {"token_pos_in_items_ptr", "None", P},
                              {"token_pos_in_items_len", "0", P}, {"max_item_len_ptr", "None", P},
                              {"seq_lens", "None", P}, {"seq_lens_q", "None", P}, {"block_tables", "None", P},
                              {"max_token_per_sequence", "None", P}, {"max_sequence_kv", "None", P},
                              {"fixed_split_size", "None", P}, {"disable_split_kv", "False", P}}};

const Signature kPrefillRun{{{"self", nullptr, P}, {"q", nullptr, P}, {"paged_kv_cache", nullptr, P},
                             {"args", nullptr, V}, {"q_scale", "None", K}, {"k_scale", "None", K},
                             {"v_scale", "None", K}, {"out", "None", K}, {"lse", "None", K},
                             {"return_lse", "False", K}, {"enable_pdl", "None", K}, {"window_left", "None", K},
                             {"sinks", "None", K}, {"kv_cache_sf", "None", K},
                             {"skip_softmax_threshold_scale_factor", "None", K}, {"use_fp16_softmax", "None", K},
                             {"uses_spcompress", "None", K}}};

const Signature kDecodeInit{{{"self", nullptr, P}, {"float_workspace_buffer", nullptr, P}, {"kv_layout", "'NHD'", P},
                             {"use_cuda_graph", "False", P}, {"use_tensor_cores", "False", P},
                             {"paged_kv_indptr_buffer", "None", P}, {"paged_kv_indices_buffer", "None", P},
                             {"paged_kv_last_page_len_buffer", "None", P}, {"backend", "'auto'", P},
                             {"jit_args", "None", P}}};

// plan(indptr, indices, last_page_len, num_qo_heads, num_kv_heads, head_dim, page_size,
//      *deprecated_positional_args, **kwargs) forwards both to _plan_impl's keyword-only parameters.
const Signature kDecodePlan{
    {{"self", nullptr, P}, {"indptr", nullptr, P}, {"indices", nullptr, P}, {"last_page_len", nullptr, P},
     {"num_qo_heads", nullptr, P}, {"num_kv_heads", nullptr, P}, {"head_dim", nullptr, P}, {"page_size", nullptr, P},
     {"deprecated_positional_args", nullptr, V}, {"kwargs", nullptr, KW}},
    {"pos_encoding_mode", "window_left", "logits_soft_cap", "q_data_type", "kv_data_type", "o_data_type", "data_type",
     "sm_scale", "rope_scale", "rope_theta", "non_blocking", "block_tables", "seq_lens", "fixed_split_size",
     "disable_split_kv", "q_len_per_req"},
    {{"pos_encoding_mode", "'NONE'", K}, {"window_left", "-1", K}, {"window_right", "0", K},
     {"logits_soft_cap", "None", K}, {"q_data_type", "'float16'", K}, {"kv_data_type", "None", K},
     {"o_data_type", "None", K}, {"data_type", "None", K}, {"sm_scale", "None", K}, {"rope_scale", "None", K},
     {"rope_theta", "None", K}, {"non_blocking", "True", K}, {"block_tables", "None", K}, {"seq_lens", "None", K},
     {"fixed_split_size", "None", K}, {"disable_split_kv", "False", K}, {"q_len_per_req", "1", K}}};

const Signature kDecodeRun{{{"self", nullptr, P}, {"q", nullptr, P}, {"paged_kv_cache", nullptr, P},
                            {"args", nullptr, V}, {"q_scale", "None", K}, {"k_scale", "None", K},
                            {"v_scale", "None", K}, {"out", "None", K}, {"lse", "None", K},
                            {"return_lse", "False", K}, {"enable_pdl", "None", K}, {"window_left", "None", K},
                            {"sinks", "None", K}, {"q_len_per_req", "None", K},
                            {"skip_softmax_threshold_scale_factor", "None", K}, {"kv_cache_sf", "None", K}}};

}  // namespace

Family family_of(const std::string& klass, const std::string& method) {
  if (klass.empty()) return method == "single_prefill_with_kv_cache" ? Family::single_prefill : Family::other;
  if (method != "__init__" && method != "plan" && method != "run") return Family::other;
  if (klass == "PODWithPagedKVCacheWrapper") return Family::pod;
  if (klass == "BatchPODWithPagedKVCacheWrapper") return Family::batch_pod;
  if (klass == "BatchPrefillWithPagedKVCacheWrapper") return Family::batch_prefill;
  if (klass == "BatchDecodeWithPagedKVCacheWrapper" || klass == "CUDAGraphBatchDecodeWithPagedKVCacheWrapper")
    return Family::batch_decode;
  return Family::other;
}

const char* family_class(Family f) {
  switch (f) {
    case Family::pod: return "PODWithPagedKVCacheWrapper";
    case Family::batch_pod: return "BatchPODWithPagedKVCacheWrapper";
    case Family::batch_prefill: return "BatchPrefillWithPagedKVCacheWrapper";
    case Family::batch_decode: return "BatchDecodeWithPagedKVCacheWrapper";
    default: return "";
  }
}

const Signature& signature(Family f, const std::string& m) {
  switch (f) {
    case Family::pod: return m == "__init__" ? kPodInit : m == "plan" ? kPodPlan : kPodRun;
    case Family::batch_pod: return m == "__init__" ? kBatchPodInit : m == "plan" ? kBatchPodPlan : kBatchPodRun;
    case Family::batch_prefill: return m == "__init__" ? kPrefillInit : m == "plan" ? kPrefillPlan : kPrefillRun;
    case Family::batch_decode: return m == "__init__" ? kDecodeInit : m == "plan" ? kDecodePlan : kDecodeRun;
    case Family::single_prefill: return kSinglePrefill;
    default: throw std::logic_error("no signature for this function");
  }
}

}  // namespace podcheck::dump
