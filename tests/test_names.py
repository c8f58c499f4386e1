"""Stable keys: versioned inline namespaces renamed, manglings kept valid."""

import pytest

from spillway.names import demangle, display_key, stable_key


@pytest.mark.parametrize("symbol,key,text", [
    ("_ZN7rocprim17ROCPRIM_300400_NS6detail13reduce_kernelINS0_4plusIiEEiEEvPT0_PKS5_T_",
     "_ZN7rocprim10ROCPRIM_NS6detail13reduce_kernelINS0_4plusIiEEiEEvPT0_PKS5_T_",
     "void rocprim::ROCPRIM_NS::detail::reduce_kernel<rocprim::ROCPRIM_NS::plus<int>, int>"
     "(int*, int const*, rocprim::ROCPRIM_NS::plus<int>)"),
    ("_ZN3cub20CUB_200200_SM_800_NS11EmptyKernelIvEEvv", "_ZN3cub6CUB_NS11EmptyKernelIvEEvv",
     "void cub::CUB_NS::EmptyKernel<void>()"),
    ("_ZN6hipcub16HIPCUB_300400_NS6detail1kEv", "_ZN6hipcub9HIPCUB_NS6detail1kEv",
     "hipcub::HIPCUB_NS::detail::k()"),
    ("_ZN6thrust23THRUST_200700_SM_520_NS4fillEv", "_ZN6thrust9THRUST_NS4fillEv", "thrust::THRUST_NS::fill()"),
])
def test_versioned_namespaces_are_renamed_to_valid_manglings(symbol, key, text):
    assert stable_key(symbol) == key
    assert demangle(key) == text
    # The key is what the versioned name reads as with the version removed.
    for fixed in ("ROCPRIM_NS::", "HIPCUB_NS::", "CUB_NS::", "THRUST_NS::"):
        text = text.replace(fixed, "")
    assert display_key(demangle(symbol)) == text
    assert stable_key(key) == key


@pytest.mark.parametrize("symbol", [
    "_Z3fooi",
    "_ZN3foo21ROCPRIM_300400_NS_bar1kEv",     # the token is only part of an identifier
    "_ZN3foo18ROCPRIM_300400_NSX1kEv",        # length prefix does not match the token
    "kernel_ROCPRIM_300400_NS",               # not mangled
    "_ZN3foo117ROCPRIM_300400_NS1kEv",        # '117' is not '17': a different token length
])
def test_other_names_are_untouched(symbol):
    assert stable_key(symbol) == symbol


def test_demangle_keeps_non_cxx_names():
    assert demangle("private_table") == "private_table"
    assert demangle("_Znot_valid") == "_Znot_valid"
