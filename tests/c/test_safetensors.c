/* test_safetensors.c — the safetensors reader accepts well-formed files and
 * refuses every malformed one with its error code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "internal.h"
#include "safetensors.h"
#include "testutil.h"

/* A file from a header string and `data_len` bytes of data (byte i = i). */
static uint8_t *make_file(size_t *len, const char *header, size_t data_len) {
    size_t n = strlen(header);
    *len = 8 + n + data_len;
    uint8_t *buf = malloc(*len);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)n >> (8 * i));
    memcpy(buf + 8, header, n);
    for (size_t i = 0; i < data_len; i++) buf[8 + n + i] = (uint8_t)i;
    return buf;
}

static int parse_header(const char *header, size_t data_len) {
    size_t len;
    uint8_t *buf = make_file(&len, header, data_len);
    st_file f;
    int rc = st_parse(&f, buf, len);
    if (rc == ALAB_OK) st_free(&f);
    free(buf);
    return rc;
}

static void a_well_formed_file_gives_views_of_its_tensors(void **state) {
    (void)state;
    const char *h = "{\"__metadata__\":{\"format\":\"pt\"},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                    "\"b\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[24,32]}}";
    size_t len;
    uint8_t *buf = make_file(&len, h, 32);
    st_file f;
    assert_int_equal(st_parse(&f, buf, len), ALAB_OK);
    assert_int_equal(f.n, 2);
    const st_tensor *a = st_find(&f, "a"), *b = st_find(&f, "b");
    assert_non_null(a);
    assert_non_null(b);
    assert_null(st_find(&f, "__metadata__"));
    assert_int_equal(a->dtype, ST_F32);
    assert_int_equal(a->ndim, 2);
    assert_int_equal(a->shape[0], 2);
    assert_int_equal(a->shape[1], 3);
    assert_int_equal(a->nbytes, 24);
    assert_ptr_equal(a->data, buf + 8 + strlen(h));
    assert_int_equal(b->dtype, ST_F16);
    assert_int_equal(b->data[0], 24); /* the data section starts right after the header */
    st_free(&f);
    free(buf);
}

static void a_scalar_and_an_empty_tensor_are_accepted(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
                                  "\"e\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[4,4]}}", 4),
                     ALAB_OK);
}

static void a_file_shorter_than_eight_bytes_is_refused(void **state) {
    (void)state;
    uint8_t buf[5] = {1, 0, 0, 0, 0};
    st_file f;
    assert_int_equal(st_parse(&f, buf, sizeof buf), ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "too short"));
}

static void a_header_length_past_the_end_of_the_file_is_refused(void **state) {
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len, "{}", 0);
    buf[0] = 200; /* claims 200 header bytes, has 2 */
    st_file f;
    assert_int_equal(st_parse(&f, buf, len), ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "past the end"));
    free(buf);
}

static void a_huge_header_length_is_refused_before_any_allocation(void **state) {
    (void)state;
    size_t len;
    uint8_t *buf = make_file(&len, "{}", 0);
    memset(buf, 0xff, 8);
    st_file f;
    assert_int_equal(st_parse(&f, buf, len), ALAB_EFORMAT);
    free(buf);
}

static void a_header_that_is_not_json_is_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",", 0), ALAB_EJSON);
    assert_int_equal(parse_header("PK\x03\x04garbage", 0), ALAB_EJSON);
}

static void a_header_that_is_not_an_object_is_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("[1,2,3]", 0), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":[1]}", 0), ALAB_EFORMAT);
}

static void entries_without_dtype_shape_or_offsets_are_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4), ALAB_EFORMAT);
}

static void an_unknown_dtype_is_refused_with_edtype(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F33\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4), ALAB_EDTYPE);
    assert_non_null(strstr(alab_last_error(), "F33"));
}

static void offsets_past_the_data_section_are_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4), ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "truncated"));
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 16), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 16), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 16), ALAB_EFORMAT);
}

static void a_size_that_disagrees_with_shape_and_dtype_is_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 16), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,16]}}", 16), ALAB_EFORMAT);
}

static void a_shape_whose_product_overflows_is_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,0]}}", 0),
                     ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4), ALAB_EFORMAT);
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4), ALAB_EFORMAT);
}

static void more_than_eight_dimensions_are_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1),
                     ALAB_EFORMAT);
}

static void overlapping_tensors_are_refused(void **state) {
    (void)state;
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                  "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12),
                     ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "overlap"));
}

static void a_tensor_named_twice_is_refused(void **state) {
    (void)state;
    /* the JSON reader refuses the repeated key ... */
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                  "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
                     ALAB_EJSON);
    assert_non_null(strstr(alab_last_error(), "duplicate key \"a\""));
    /* ... and the index catches "a" and "a\u0000", equal as C strings */
    assert_int_equal(parse_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                  "\"a\\u0000\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8),
                     ALAB_EFORMAT);
    assert_non_null(strstr(alab_last_error(), "appears twice"));
}

/* A header of n zero-size tensors "t0".."t{n-1}", with "dup" (the name of
 * tensor `dup`) given again at the end when dup >= 0. */
static char *many_tensors(int n, int dup) {
    size_t cap = (size_t)n * 64 + 128, len = 0;
    char *h = malloc(cap);
    h[len++] = '{';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(h + len, cap - len, "%s\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}",
                                i ? "," : "", i);
    if (dup >= 0)
        len += (size_t)snprintf(h + len, cap - len, ",\"t%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}", dup);
    h[len++] = '}';
    h[len] = '\0';
    return h;
}

/* Issue 21: the duplicate check compared each name with every earlier one
 * (400 000 entries took over 90 s). Now a sorted index: this test runs in
 * about a second; the load times from 10k to 1M entries are in
 * docs/BENCHMARKS.md. */
static void four_hundred_thousand_tensors_parse_and_are_found(void **state) {
    (void)state;
    const int n = 400000;
    char *h = many_tensors(n, -1);
    size_t len;
    uint8_t *buf = make_file(&len, h, 0);
    st_file f;
    assert_int_equal(st_parse(&f, buf, len), ALAB_OK);
    assert_int_equal(f.n, n);
    char name[32];
    for (int i = 0; i < n; i += 9973) {
        snprintf(name, sizeof name, "t%d", i);
        const st_tensor *t = st_find(&f, name);
        assert_non_null(t);
        assert_string_equal(t->name, name);
        assert_ptr_equal(t, &f.tensors[i]);
    }
    assert_null(st_find(&f, "t400000"));
    assert_null(st_find(&f, ""));
    st_free(&f);
    free(buf);
    free(h);
    /* the same with the first name repeated last: refused */
    h = many_tensors(n, 0);
    buf = make_file(&len, h, 0);
    assert_int_equal(st_parse(&f, buf, len), ALAB_EJSON);
    assert_non_null(strstr(alab_last_error(), "duplicate key \"t0\""));
    free(buf);
    free(h);
}

static void sixteen_bit_floats_convert_exactly(void **state) {
    (void)state;
    assert_true(alab_f16_to_f32(0x3c00) == 1.0f);
    assert_true(alab_f16_to_f32(0xc000) == -2.0f);
    assert_true(alab_f16_to_f32(0x7bff) == 65504.0f);
    assert_true(alab_f16_to_f32(0x0001) == ldexpf(1.0f, -24)); /* smallest subnormal */
    assert_true(alab_f16_to_f32(0x03ff) == ldexpf(1023.0f, -24));
    assert_true(isinf(alab_f16_to_f32(0x7c00)));
    assert_true(isnan(alab_f16_to_f32(0x7e00)));
    assert_true(alab_bf16_to_f32(0x3f80) == 1.0f);
    assert_true(alab_bf16_to_f32(0x4049) == 3.140625f);
    /* every finite half round-trips through float and back by value */
    for (uint32_t h = 0; h < 0x7c00; h++) {
        float f = alab_f16_to_f32((uint16_t)h);
        assert_true(f >= 0.0f && f <= 65504.0f);
        if (h) assert_true(f > alab_f16_to_f32((uint16_t)(h - 1)));
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_well_formed_file_gives_views_of_its_tensors),
        cmocka_unit_test(a_scalar_and_an_empty_tensor_are_accepted),
        cmocka_unit_test(a_file_shorter_than_eight_bytes_is_refused),
        cmocka_unit_test(a_header_length_past_the_end_of_the_file_is_refused),
        cmocka_unit_test(a_huge_header_length_is_refused_before_any_allocation),
        cmocka_unit_test(a_header_that_is_not_json_is_refused),
        cmocka_unit_test(a_header_that_is_not_an_object_is_refused),
        cmocka_unit_test(entries_without_dtype_shape_or_offsets_are_refused),
        cmocka_unit_test(an_unknown_dtype_is_refused_with_edtype),
        cmocka_unit_test(offsets_past_the_data_section_are_refused),
        cmocka_unit_test(a_size_that_disagrees_with_shape_and_dtype_is_refused),
        cmocka_unit_test(a_shape_whose_product_overflows_is_refused),
        cmocka_unit_test(more_than_eight_dimensions_are_refused),
        cmocka_unit_test(overlapping_tensors_are_refused),
        cmocka_unit_test(a_tensor_named_twice_is_refused),
        cmocka_unit_test(four_hundred_thousand_tensors_parse_and_are_found),
        cmocka_unit_test(sixteen_bit_floats_convert_exactly),
    };
    return cmocka_run_group_tests_name("safetensors", tests, NULL, NULL);
}
