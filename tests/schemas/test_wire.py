"""The decoder's answer when the registry cannot be asked: wait, then fail loudly, never a DecodeError
(a DecodeError sends the record to dead_letter; a registry outage is not the record's fault)."""

from __future__ import annotations

import time

import pytest

from poolsight.schemas.wire import WIRE, AvroDecoder, DecodeError, RegistryUnavailable
from tests.conftest import free_port


def test_an_unreachable_registry_is_waited_for_then_named_never_a_decode_error() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    decoder = AvroDecoder(url, patience=1.5)
    started = time.monotonic()
    with pytest.raises(RegistryUnavailable) as err:
        decoder.decode(WIRE.pack(0, 42) + b"\x02")
    waited = time.monotonic() - started
    assert not isinstance(err.value, DecodeError)
    assert 1.0 <= waited < 10, waited  # retried for about its patience, then gave up
    assert url in str(err.value) and "schema id 42" in str(err.value)


def test_a_record_without_the_wire_header_is_refused_without_asking_the_registry() -> None:
    decoder = AvroDecoder(f"http://127.0.0.1:{free_port()}", patience=60)
    started = time.monotonic()
    with pytest.raises(DecodeError, match="magic byte 1"):
        decoder.decode(WIRE.pack(1, 42) + b"\x02")
    with pytest.raises(DecodeError, match="5-byte"):
        decoder.decode(b"\x00\x01")
    assert time.monotonic() - started < 1
