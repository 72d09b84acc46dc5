//! Raw declarations of exactly the ISL 0.27 functions this crate uses.
//!
//! The library itself is the static `libisl.a` that the `isl-rs` crate builds from source and links;
//! none of `isl-rs`'s Rust wrappers are used. Each declaration copies the prototype of ISL's public
//! headers (`isl/include/isl/*.h`); the ownership annotations are repeated in comments as
//! `take` (ISL consumes the argument), `keep` (ISL borrows it) and `give` (the caller owns the result).
//! Only the safe wrappers of the parent module call these.

#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

macro_rules! opaque {
    ($($name:ident),* $(,)?) => {
        $(
            /// An opaque ISL object, only ever handled through a pointer.
            #[repr(C)]
            pub struct $name {
                _private: [u8; 0],
            }
        )*
    };
}

opaque!(
    isl_ctx,
    isl_set,
    isl_union_set,
    isl_map,
    isl_basic_map,
    isl_basic_map_list,
    isl_mat,
    isl_union_map,
    isl_set_list,
    isl_map_list,
    isl_val,
    isl_multi_val,
    isl_space,
    isl_id,
    isl_id_list,
    isl_multi_union_pw_aff,
    isl_union_pw_multi_aff,
    isl_union_access_info,
    isl_union_flow,
    isl_schedule_constraints,
    isl_schedule,
    isl_schedule_node,
    isl_printer,
    isl_ast_build,
    isl_ast_node,
    isl_ast_node_list,
    isl_ast_expr,
    isl_pw_aff,
);

/// `isl_size`: a count, or -1 on error.
pub type isl_size = c_int;
/// `isl_bool`: 1 true, 0 false, -1 error.
pub type isl_bool = c_int;
/// `isl_stat`: 0 ok, -1 error.
pub type isl_stat = c_int;

/// `enum isl_dim_type` values used here.
pub const ISL_DIM_CST: c_int = 0;
pub const ISL_DIM_PARAM: c_int = 1;
pub const ISL_DIM_IN: c_int = 2;
pub const ISL_DIM_OUT: c_int = 3;
/// `isl_dim_set` is the same as `isl_dim_out`.
pub const ISL_DIM_SET: c_int = 3;
pub const ISL_DIM_DIV: c_int = 4;

/// `enum isl_error` value of an exceeded operation budget.
pub const ISL_ERROR_NONE: c_int = 0;
pub const ISL_ERROR_QUOTA: c_int = 6;

/// `ISL_ARG_SKIP_HELP`: `isl_ctx_parse_options` does not act on `--help`.
pub const ISL_ARG_SKIP_HELP: c_uint = 1 << 1;

/// `ISL_ON_ERROR_CONTINUE`: on error, record it and return NULL / -1 without printing or aborting.
pub const ISL_ON_ERROR_CONTINUE: c_int = 1;

/// `ISL_YAML_STYLE_BLOCK`: multi-line YAML when printing schedule trees.
pub const ISL_YAML_STYLE_BLOCK: c_int = 0;

/// `enum isl_schedule_node_type` values.
pub const ISL_SCHEDULE_NODE_BAND: c_int = 0;
pub const ISL_SCHEDULE_NODE_DOMAIN: c_int = 2;
pub const ISL_SCHEDULE_NODE_FILTER: c_int = 5;
pub const ISL_SCHEDULE_NODE_LEAF: c_int = 6;
pub const ISL_SCHEDULE_NODE_SEQUENCE: c_int = 9;
pub const ISL_SCHEDULE_NODE_SET: c_int = 10;

/// `enum isl_ast_node_type` values.
pub const ISL_AST_NODE_FOR: c_int = 1;
pub const ISL_AST_NODE_IF: c_int = 2;
pub const ISL_AST_NODE_BLOCK: c_int = 3;
pub const ISL_AST_NODE_MARK: c_int = 4;
pub const ISL_AST_NODE_USER: c_int = 5;

/// `enum isl_ast_expr_type` values.
pub const ISL_AST_EXPR_OP: c_int = 0;
pub const ISL_AST_EXPR_ID: c_int = 1;
pub const ISL_AST_EXPR_INT: c_int = 2;

/// `enum isl_ast_expr_op_type` values, in declaration order from `isl_ast_expr_op_and` = 0.
pub const ISL_AST_EXPR_OP_CALL: c_int = 22;

unsafe extern "C" {
    // ctx.h, options.h, schedule.h, schedule_node.h: the context and its options.
    pub fn isl_ctx_alloc() -> *mut isl_ctx; // give
    pub fn isl_ctx_free(ctx: *mut isl_ctx);
    pub fn isl_ctx_set_max_operations(ctx: *mut isl_ctx, max_operations: c_ulong);
    pub fn isl_ctx_reset_operations(ctx: *mut isl_ctx);
    pub fn isl_ctx_last_error(ctx: *mut isl_ctx) -> c_int;
    pub fn isl_ctx_last_error_msg(ctx: *mut isl_ctx) -> *const c_char; // owned by ctx
    pub fn isl_ctx_last_error_file(ctx: *mut isl_ctx) -> *const c_char; // owned by ctx
    pub fn isl_ctx_last_error_line(ctx: *mut isl_ctx) -> c_int;
    pub fn isl_ctx_reset_error(ctx: *mut isl_ctx);
    pub fn isl_options_set_on_error(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    /// Parses command-line style options into the context's options; returns the number of
    /// arguments left (`argv[0]` included), which it moves to the front of `argv`.
    pub fn isl_ctx_parse_options(
        ctx: *mut isl_ctx,
        argc: c_int,
        argv: *mut *mut c_char,
        flags: c_uint,
    ) -> c_int;
    pub fn isl_options_set_schedule_outer_coincidence(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    pub fn isl_options_set_schedule_serialize_sccs(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    pub fn isl_options_set_schedule_whole_component(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    pub fn isl_options_set_tile_scale_tile_loops(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    pub fn isl_options_set_tile_shift_point_loops(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    pub fn isl_options_set_schedule_max_coefficient(ctx: *mut isl_ctx, val: c_int) -> isl_stat;
    pub fn isl_options_set_schedule_max_constant_term(ctx: *mut isl_ctx, val: c_int) -> isl_stat;

    // set.h
    pub fn isl_set_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_set; // give
    pub fn isl_set_to_str(set: *mut isl_set) -> *mut c_char; // keep; give (malloc'd)
    pub fn isl_set_copy(set: *mut isl_set) -> *mut isl_set;
    pub fn isl_set_free(set: *mut isl_set) -> *mut isl_set;
    pub fn isl_set_get_tuple_name(set: *mut isl_set) -> *const c_char; // keep; owned by set
    pub fn isl_set_dim(set: *mut isl_set, dim_type: c_int) -> isl_size; // keep
    pub fn isl_set_intersect(a: *mut isl_set, b: *mut isl_set) -> *mut isl_set; // take, take
    pub fn isl_set_subtract(a: *mut isl_set, b: *mut isl_set) -> *mut isl_set; // take, take
    pub fn isl_set_compute_divs(set: *mut isl_set) -> *mut isl_set; // take
    pub fn isl_set_project_out(
        set: *mut isl_set,
        dim_type: c_int,
        first: c_uint,
        n: c_uint,
    ) -> *mut isl_set; // take
    pub fn isl_set_lexmin(set: *mut isl_set) -> *mut isl_set; // take
    pub fn isl_set_from_params(set: *mut isl_set) -> *mut isl_set; // take
    pub fn isl_set_is_bounded(set: *mut isl_set) -> isl_bool; // keep
    pub fn isl_set_dim_min_val(set: *mut isl_set, pos: c_int) -> *mut isl_val; // take; give
    pub fn isl_set_dim_max_val(set: *mut isl_set, pos: c_int) -> *mut isl_val; // take; give
    pub fn isl_set_dim_min(set: *mut isl_set, pos: c_int) -> *mut isl_pw_aff; // take; give
    pub fn isl_set_dim_max(set: *mut isl_set, pos: c_int) -> *mut isl_pw_aff; // take; give
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn isl_set_plain_get_val_if_fixed(
        set: *mut isl_set,
        dim_type: c_int,
        pos: c_uint,
    ) -> *mut isl_val; // keep; give
    pub fn isl_set_identity(set: *mut isl_set) -> *mut isl_map; // take
    pub fn isl_set_is_empty(set: *mut isl_set) -> isl_bool; // keep
    pub fn isl_set_get_dim_name(set: *mut isl_set, dim_type: c_int, pos: c_uint) -> *const c_char; // keep; owned by set

    // union_set.h
    pub fn isl_union_set_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_union_set;
    pub fn isl_union_set_to_str(uset: *mut isl_union_set) -> *mut c_char; // keep
    pub fn isl_union_set_copy(uset: *mut isl_union_set) -> *mut isl_union_set;
    pub fn isl_union_set_free(uset: *mut isl_union_set) -> *mut isl_union_set;
    pub fn isl_union_set_empty_ctx(ctx: *mut isl_ctx) -> *mut isl_union_set;
    pub fn isl_union_set_from_set(set: *mut isl_set) -> *mut isl_union_set; // take
    pub fn isl_union_set_union(a: *mut isl_union_set, b: *mut isl_union_set) -> *mut isl_union_set;
    pub fn isl_union_set_intersect(
        a: *mut isl_union_set,
        b: *mut isl_union_set,
    ) -> *mut isl_union_set;
    pub fn isl_union_set_subtract(
        a: *mut isl_union_set,
        b: *mut isl_union_set,
    ) -> *mut isl_union_set;
    pub fn isl_union_set_intersect_params(
        uset: *mut isl_union_set,
        set: *mut isl_set,
    ) -> *mut isl_union_set;
    pub fn isl_union_set_params(uset: *mut isl_union_set) -> *mut isl_set; // take
    pub fn isl_union_set_coalesce(uset: *mut isl_union_set) -> *mut isl_union_set; // take
    pub fn isl_union_set_is_empty(uset: *mut isl_union_set) -> isl_bool; // keep
    pub fn isl_union_set_is_equal(a: *mut isl_union_set, b: *mut isl_union_set) -> isl_bool; // keep, keep
    pub fn isl_union_set_is_subset(a: *mut isl_union_set, b: *mut isl_union_set) -> isl_bool; // keep, keep
    pub fn isl_union_set_get_set_list(uset: *mut isl_union_set) -> *mut isl_set_list; // keep; give
    pub fn isl_set_list_size(list: *mut isl_set_list) -> isl_size; // keep
    pub fn isl_set_list_get_at(list: *mut isl_set_list, index: c_int) -> *mut isl_set; // keep; give
    pub fn isl_set_list_free(list: *mut isl_set_list) -> *mut isl_set_list;

    // map.h
    pub fn isl_map_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_map;
    pub fn isl_map_to_str(map: *mut isl_map) -> *mut c_char; // keep
    pub fn isl_map_copy(map: *mut isl_map) -> *mut isl_map;
    pub fn isl_map_free(map: *mut isl_map) -> *mut isl_map;
    pub fn isl_map_dim(map: *mut isl_map, dim_type: c_int) -> isl_size; // keep
    pub fn isl_map_add_dims(map: *mut isl_map, dim_type: c_int, n: c_uint) -> *mut isl_map; // take
    pub fn isl_map_fix_si(
        map: *mut isl_map,
        dim_type: c_int,
        pos: c_uint,
        value: c_int,
    ) -> *mut isl_map;
    pub fn isl_map_get_tuple_name(map: *mut isl_map, dim_type: c_int) -> *const c_char; // keep
    pub fn isl_map_deltas(map: *mut isl_map) -> *mut isl_set; // take
    pub fn isl_map_reset_tuple_id(map: *mut isl_map, dim_type: c_int) -> *mut isl_map; // take
    pub fn isl_map_plain_get_val_if_fixed(
        map: *mut isl_map,
        dim_type: c_int,
        pos: c_uint,
    ) -> *mut isl_val; // keep; give
    pub fn isl_map_sample(map: *mut isl_map) -> *mut isl_basic_map; // take
    pub fn isl_basic_map_to_str(bmap: *mut isl_basic_map) -> *mut c_char; // keep
    pub fn isl_basic_map_free(bmap: *mut isl_basic_map) -> *mut isl_basic_map;
    pub fn isl_map_get_basic_map_list(map: *mut isl_map) -> *mut isl_basic_map_list; // keep; give
    pub fn isl_basic_map_list_size(list: *mut isl_basic_map_list) -> isl_size; // keep
    pub fn isl_basic_map_list_get_at(
        list: *mut isl_basic_map_list,
        index: c_int,
    ) -> *mut isl_basic_map; // keep; give
    pub fn isl_basic_map_list_free(list: *mut isl_basic_map_list) -> *mut isl_basic_map_list;
    pub fn isl_map_from_basic_map(bmap: *mut isl_basic_map) -> *mut isl_map; // take
    pub fn isl_map_get_space(map: *mut isl_map) -> *mut isl_space; // keep; give
    pub fn isl_map_empty(space: *mut isl_space) -> *mut isl_map; // take
    pub fn isl_map_from_domain(set: *mut isl_set) -> *mut isl_map; // take
    pub fn isl_map_domain(map: *mut isl_map) -> *mut isl_set; // take
    pub fn isl_basic_map_dim(bmap: *mut isl_basic_map, dim_type: c_int) -> isl_size; // keep
    pub fn isl_basic_map_equalities_matrix(
        bmap: *mut isl_basic_map,
        c1: c_int,
        c2: c_int,
        c3: c_int,
        c4: c_int,
        c5: c_int,
    ) -> *mut isl_mat; // keep; give
    pub fn isl_basic_map_inequalities_matrix(
        bmap: *mut isl_basic_map,
        c1: c_int,
        c2: c_int,
        c3: c_int,
        c4: c_int,
        c5: c_int,
    ) -> *mut isl_mat; // keep; give
    pub fn isl_basic_map_from_constraint_matrices(
        space: *mut isl_space,
        eq: *mut isl_mat,
        ineq: *mut isl_mat,
        c1: c_int,
        c2: c_int,
        c3: c_int,
        c4: c_int,
        c5: c_int,
    ) -> *mut isl_basic_map; // take, take, take; give
    pub fn isl_mat_alloc(ctx: *mut isl_ctx, n_row: c_uint, n_col: c_uint) -> *mut isl_mat; // give
    pub fn isl_mat_free(mat: *mut isl_mat) -> *mut isl_mat;
    pub fn isl_mat_rows(mat: *mut isl_mat) -> isl_size; // keep
    pub fn isl_mat_cols(mat: *mut isl_mat) -> isl_size; // keep
    pub fn isl_mat_get_element_val(mat: *mut isl_mat, row: c_int, col: c_int) -> *mut isl_val; // keep; give
    pub fn isl_mat_set_element_val(
        mat: *mut isl_mat,
        row: c_int,
        col: c_int,
        v: *mut isl_val,
    ) -> *mut isl_mat; // take, take
    pub fn isl_map_is_subset(a: *mut isl_map, b: *mut isl_map) -> isl_bool; // keep, keep
    pub fn isl_map_union(a: *mut isl_map, b: *mut isl_map) -> *mut isl_map; // take, take

    // union_map.h
    pub fn isl_union_map_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_union_map;
    pub fn isl_union_map_to_str(umap: *mut isl_union_map) -> *mut c_char; // keep
    pub fn isl_union_map_copy(umap: *mut isl_union_map) -> *mut isl_union_map;
    pub fn isl_union_map_free(umap: *mut isl_union_map) -> *mut isl_union_map;
    pub fn isl_union_map_empty_ctx(ctx: *mut isl_ctx) -> *mut isl_union_map;
    pub fn isl_union_map_from_map(map: *mut isl_map) -> *mut isl_union_map; // take
    pub fn isl_union_map_union(a: *mut isl_union_map, b: *mut isl_union_map) -> *mut isl_union_map;
    pub fn isl_union_map_intersect(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_subtract(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_intersect_domain_union_set(
        umap: *mut isl_union_map,
        uset: *mut isl_union_set,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_intersect_range_union_set(
        umap: *mut isl_union_map,
        uset: *mut isl_union_set,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_apply_domain(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_apply_range(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_coalesce(umap: *mut isl_union_map) -> *mut isl_union_map; // take
    pub fn isl_union_map_domain(umap: *mut isl_union_map) -> *mut isl_union_set; // take
    pub fn isl_union_map_range(umap: *mut isl_union_map) -> *mut isl_union_set; // take
    pub fn isl_union_map_wrap(umap: *mut isl_union_map) -> *mut isl_union_set; // take
    pub fn isl_union_map_flat_range_product(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map; // take, take
    pub fn isl_union_map_reverse(umap: *mut isl_union_map) -> *mut isl_union_map; // take
    pub fn isl_union_map_lexmax(umap: *mut isl_union_map) -> *mut isl_union_map; // take
    pub fn isl_union_map_deltas(umap: *mut isl_union_map) -> *mut isl_union_set; // take
    pub fn isl_union_map_lex_lt_union_map(
        a: *mut isl_union_map,
        b: *mut isl_union_map,
    ) -> *mut isl_union_map;
    pub fn isl_union_map_is_empty(umap: *mut isl_union_map) -> isl_bool; // keep
    pub fn isl_union_map_is_equal(a: *mut isl_union_map, b: *mut isl_union_map) -> isl_bool; // keep, keep
    pub fn isl_union_map_is_subset(a: *mut isl_union_map, b: *mut isl_union_map) -> isl_bool; // keep, keep
    pub fn isl_union_map_is_single_valued(umap: *mut isl_union_map) -> isl_bool; // keep
    pub fn isl_union_map_get_map_list(umap: *mut isl_union_map) -> *mut isl_map_list; // keep; give
    pub fn isl_map_list_size(list: *mut isl_map_list) -> isl_size; // keep
    pub fn isl_map_list_get_at(list: *mut isl_map_list, index: c_int) -> *mut isl_map; // keep; give
    pub fn isl_map_list_free(list: *mut isl_map_list) -> *mut isl_map_list;

    // val.h, space.h
    pub fn isl_val_int_from_si(ctx: *mut isl_ctx, i: c_long) -> *mut isl_val; // give
    pub fn isl_space_copy(space: *mut isl_space) -> *mut isl_space;
    pub fn isl_space_free(space: *mut isl_space) -> *mut isl_space;
    pub fn isl_space_add_dims(space: *mut isl_space, dim_type: c_int, n: c_uint) -> *mut isl_space; // take
    pub fn isl_space_set_dim_name(
        space: *mut isl_space,
        dim_type: c_int,
        pos: c_uint,
        name: *const c_char,
    ) -> *mut isl_space; // take
    pub fn isl_space_dim(space: *mut isl_space, dim_type: c_int) -> isl_size; // keep
    pub fn isl_val_free(v: *mut isl_val) -> *mut isl_val;
    pub fn isl_val_is_int(v: *mut isl_val) -> isl_bool; // keep
    pub fn isl_val_get_num_si(v: *mut isl_val) -> c_long; // keep
    pub fn isl_val_to_str(v: *mut isl_val) -> *mut c_char; // keep
    pub fn isl_multi_val_zero(space: *mut isl_space) -> *mut isl_multi_val; // take
    pub fn isl_multi_val_set_val(
        mv: *mut isl_multi_val,
        pos: c_int,
        v: *mut isl_val,
    ) -> *mut isl_multi_val; // take, take

    // flow.h
    pub fn isl_union_access_info_from_sink(sink: *mut isl_union_map) -> *mut isl_union_access_info; // take
    pub fn isl_union_access_info_set_must_source(
        access: *mut isl_union_access_info,
        must_source: *mut isl_union_map,
    ) -> *mut isl_union_access_info; // take, take
    pub fn isl_union_access_info_set_may_source(
        access: *mut isl_union_access_info,
        may_source: *mut isl_union_map,
    ) -> *mut isl_union_access_info; // take, take
    pub fn isl_union_access_info_set_kill(
        access: *mut isl_union_access_info,
        kill: *mut isl_union_map,
    ) -> *mut isl_union_access_info; // take, take
    pub fn isl_union_access_info_set_schedule_map(
        access: *mut isl_union_access_info,
        schedule_map: *mut isl_union_map,
    ) -> *mut isl_union_access_info; // take, take
    pub fn isl_union_access_info_compute_flow(
        access: *mut isl_union_access_info,
    ) -> *mut isl_union_flow; // take
    pub fn isl_union_access_info_copy(
        access: *mut isl_union_access_info,
    ) -> *mut isl_union_access_info;
    pub fn isl_union_flow_copy(flow: *mut isl_union_flow) -> *mut isl_union_flow;
    pub fn isl_union_access_info_free(
        access: *mut isl_union_access_info,
    ) -> *mut isl_union_access_info;
    pub fn isl_union_flow_get_may_dependence(flow: *mut isl_union_flow) -> *mut isl_union_map; // keep; give
    pub fn isl_union_flow_free(flow: *mut isl_union_flow) -> *mut isl_union_flow;

    // schedule.h, aff.h, printer.h
    pub fn isl_schedule_constraints_on_domain(
        domain: *mut isl_union_set,
    ) -> *mut isl_schedule_constraints; // take
    pub fn isl_schedule_constraints_set_context(
        sc: *mut isl_schedule_constraints,
        context: *mut isl_set,
    ) -> *mut isl_schedule_constraints; // take, take
    pub fn isl_schedule_constraints_set_validity(
        sc: *mut isl_schedule_constraints,
        validity: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints; // take, take
    pub fn isl_schedule_constraints_set_coincidence(
        sc: *mut isl_schedule_constraints,
        coincidence: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints; // take, take
    pub fn isl_schedule_constraints_set_proximity(
        sc: *mut isl_schedule_constraints,
        proximity: *mut isl_union_map,
    ) -> *mut isl_schedule_constraints; // take, take
    pub fn isl_schedule_constraints_compute_schedule(
        sc: *mut isl_schedule_constraints,
    ) -> *mut isl_schedule; // take
    pub fn isl_schedule_constraints_copy(
        sc: *mut isl_schedule_constraints,
    ) -> *mut isl_schedule_constraints;
    pub fn isl_schedule_constraints_free(
        sc: *mut isl_schedule_constraints,
    ) -> *mut isl_schedule_constraints;
    pub fn isl_schedule_from_domain(domain: *mut isl_union_set) -> *mut isl_schedule; // take
    pub fn isl_schedule_insert_partial_schedule(
        schedule: *mut isl_schedule,
        partial: *mut isl_multi_union_pw_aff,
    ) -> *mut isl_schedule; // take, take
    pub fn isl_schedule_sequence(a: *mut isl_schedule, b: *mut isl_schedule) -> *mut isl_schedule; // take, take
    pub fn isl_schedule_read_from_str(ctx: *mut isl_ctx, s: *const c_char) -> *mut isl_schedule; // give
    pub fn isl_schedule_to_str(schedule: *mut isl_schedule) -> *mut c_char; // keep; give
    pub fn isl_schedule_get_root(schedule: *mut isl_schedule) -> *mut isl_schedule_node; // keep; give
    pub fn isl_schedule_copy(schedule: *mut isl_schedule) -> *mut isl_schedule;
    pub fn isl_schedule_free(schedule: *mut isl_schedule) -> *mut isl_schedule;
    pub fn isl_multi_union_pw_aff_from_union_map(
        umap: *mut isl_union_map,
    ) -> *mut isl_multi_union_pw_aff; // take
    pub fn isl_union_pw_multi_aff_from_union_map(
        umap: *mut isl_union_map,
    ) -> *mut isl_union_pw_multi_aff; // take
    pub fn isl_schedule_pullback_union_pw_multi_aff(
        schedule: *mut isl_schedule,
        upma: *mut isl_union_pw_multi_aff,
    ) -> *mut isl_schedule; // take, take
    pub fn isl_printer_to_str(ctx: *mut isl_ctx) -> *mut isl_printer; // give
    pub fn isl_printer_set_yaml_style(p: *mut isl_printer, yaml_style: c_int) -> *mut isl_printer; // take
    pub fn isl_printer_print_schedule(
        p: *mut isl_printer,
        schedule: *mut isl_schedule,
    ) -> *mut isl_printer; // take, keep
    pub fn isl_printer_get_str(p: *mut isl_printer) -> *mut c_char; // keep; give
    pub fn isl_printer_free(p: *mut isl_printer) -> *mut isl_printer;

    // schedule_node.h
    pub fn isl_schedule_node_copy(node: *mut isl_schedule_node) -> *mut isl_schedule_node;
    pub fn isl_schedule_node_free(node: *mut isl_schedule_node) -> *mut isl_schedule_node;
    pub fn isl_schedule_node_get_type(node: *mut isl_schedule_node) -> c_int; // keep
    pub fn isl_schedule_node_get_schedule(node: *mut isl_schedule_node) -> *mut isl_schedule; // keep; give
    pub fn isl_schedule_node_n_children(node: *mut isl_schedule_node) -> isl_size; // keep
    pub fn isl_schedule_node_get_child(
        node: *mut isl_schedule_node,
        pos: c_int,
    ) -> *mut isl_schedule_node; // keep; give
    pub fn isl_schedule_node_get_domain(node: *mut isl_schedule_node) -> *mut isl_union_set; // keep; give
    pub fn isl_schedule_node_band_get_space(node: *mut isl_schedule_node) -> *mut isl_space; // keep; give
    pub fn isl_schedule_node_band_n_member(node: *mut isl_schedule_node) -> isl_size; // keep
    pub fn isl_schedule_node_band_get_permutable(node: *mut isl_schedule_node) -> isl_bool; // keep
    pub fn isl_schedule_node_band_set_permutable(
        node: *mut isl_schedule_node,
        permutable: c_int,
    ) -> *mut isl_schedule_node; // take
    pub fn isl_schedule_node_band_split(
        node: *mut isl_schedule_node,
        pos: c_int,
    ) -> *mut isl_schedule_node; // take
    pub fn isl_schedule_node_band_tile(
        node: *mut isl_schedule_node,
        sizes: *mut isl_multi_val,
    ) -> *mut isl_schedule_node; // take, take
    pub fn isl_schedule_node_get_subtree_schedule_union_map(
        node: *mut isl_schedule_node,
    ) -> *mut isl_union_map; // keep; give

    // id.h, ast_build.h, ast.h
    pub fn isl_id_alloc(ctx: *mut isl_ctx, name: *const c_char, user: *mut c_void) -> *mut isl_id; // name copied; give
    pub fn isl_id_free(id: *mut isl_id) -> *mut isl_id;
    pub fn isl_id_get_name(id: *mut isl_id) -> *const c_char; // keep; owned by id
    pub fn isl_id_list_alloc(ctx: *mut isl_ctx, n: c_int) -> *mut isl_id_list; // give
    pub fn isl_id_list_add(list: *mut isl_id_list, el: *mut isl_id) -> *mut isl_id_list; // take, take
    pub fn isl_ast_build_from_context(set: *mut isl_set) -> *mut isl_ast_build; // take
    pub fn isl_ast_build_set_iterators(
        build: *mut isl_ast_build,
        iterators: *mut isl_id_list,
    ) -> *mut isl_ast_build; // take, take
    pub fn isl_ast_build_set_options(
        build: *mut isl_ast_build,
        options: *mut isl_union_map,
    ) -> *mut isl_ast_build; // take, take
    pub fn isl_ast_build_expr_from_set(
        build: *mut isl_ast_build,
        set: *mut isl_set,
    ) -> *mut isl_ast_expr; // keep, take
    pub fn isl_ast_build_expr_from_pw_aff(
        build: *mut isl_ast_build,
        pa: *mut isl_pw_aff,
    ) -> *mut isl_ast_expr; // keep, take
    pub fn isl_ast_build_node_from_schedule_map(
        build: *mut isl_ast_build,
        schedule: *mut isl_union_map,
    ) -> *mut isl_ast_node; // keep, take
    pub fn isl_ast_build_copy(build: *mut isl_ast_build) -> *mut isl_ast_build;
    pub fn isl_ast_build_free(build: *mut isl_ast_build) -> *mut isl_ast_build;
    pub fn isl_ast_node_free(node: *mut isl_ast_node) -> *mut isl_ast_node;
    pub fn isl_ast_node_copy(node: *mut isl_ast_node) -> *mut isl_ast_node;
    pub fn isl_ast_node_get_type(node: *mut isl_ast_node) -> c_int; // keep
    pub fn isl_ast_node_for_get_iterator(node: *mut isl_ast_node) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_node_for_get_init(node: *mut isl_ast_node) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_node_for_get_cond(node: *mut isl_ast_node) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_node_for_get_inc(node: *mut isl_ast_node) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_node_for_get_body(node: *mut isl_ast_node) -> *mut isl_ast_node; // keep; give
    pub fn isl_ast_node_if_get_cond(node: *mut isl_ast_node) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_node_if_get_then_node(node: *mut isl_ast_node) -> *mut isl_ast_node; // keep; give
    pub fn isl_ast_node_if_has_else_node(node: *mut isl_ast_node) -> isl_bool; // keep
    pub fn isl_ast_node_if_get_else_node(node: *mut isl_ast_node) -> *mut isl_ast_node; // keep; give
    pub fn isl_ast_node_block_get_children(node: *mut isl_ast_node) -> *mut isl_ast_node_list; // keep; give
    pub fn isl_ast_node_mark_get_node(node: *mut isl_ast_node) -> *mut isl_ast_node; // keep; give
    pub fn isl_ast_node_user_get_expr(node: *mut isl_ast_node) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_node_list_size(list: *mut isl_ast_node_list) -> isl_size; // keep
    pub fn isl_ast_node_list_get_at(
        list: *mut isl_ast_node_list,
        index: c_int,
    ) -> *mut isl_ast_node; // keep; give
    pub fn isl_ast_node_list_free(list: *mut isl_ast_node_list) -> *mut isl_ast_node_list;
    pub fn isl_ast_expr_free(expr: *mut isl_ast_expr) -> *mut isl_ast_expr;
    pub fn isl_ast_expr_copy(expr: *mut isl_ast_expr) -> *mut isl_ast_expr;
    pub fn isl_ast_expr_get_type(expr: *mut isl_ast_expr) -> c_int; // keep
    pub fn isl_ast_expr_op_get_type(expr: *mut isl_ast_expr) -> c_int; // keep
    pub fn isl_ast_expr_op_get_n_arg(expr: *mut isl_ast_expr) -> isl_size; // keep
    pub fn isl_ast_expr_op_get_arg(expr: *mut isl_ast_expr, pos: c_int) -> *mut isl_ast_expr; // keep; give
    pub fn isl_ast_expr_id_get_id(expr: *mut isl_ast_expr) -> *mut isl_id; // keep; give
    pub fn isl_ast_expr_int_get_val(expr: *mut isl_ast_expr) -> *mut isl_val; // keep; give
}

// Points of a set (taskgen, for `astgen::few_offsets`).
opaque!(isl_point);

unsafe extern "C" {
    // point.h
    pub fn isl_set_foreach_point(
        set: *mut isl_set,
        f: Option<unsafe extern "C" fn(pnt: *mut isl_point, user: *mut c_void) -> isl_stat>,
        user: *mut c_void,
    ) -> isl_stat; // keep; the callback takes each point
    pub fn isl_point_get_coordinate_val(
        pnt: *mut isl_point,
        dim_type: c_int,
        pos: c_int,
    ) -> *mut isl_val; // keep; give
    pub fn isl_point_free(pnt: *mut isl_point) -> *mut isl_point;
}

// Dataflow analysis on a schedule tree (`crate::deps`).
unsafe extern "C" {
    pub fn isl_union_access_info_set_schedule(
        access: *mut isl_union_access_info,
        schedule: *mut isl_schedule,
    ) -> *mut isl_union_access_info; // take, take
}

// Per statement pair dependence checks (`crate::verify`).
unsafe extern "C" {
    pub fn isl_map_apply_domain(map1: *mut isl_map, map2: *mut isl_map) -> *mut isl_map; // take, take
    pub fn isl_map_apply_range(map1: *mut isl_map, map2: *mut isl_map) -> *mut isl_map; // take, take
    pub fn isl_set_is_subset(set1: *mut isl_set, set2: *mut isl_set) -> isl_bool; // keep, keep
}
