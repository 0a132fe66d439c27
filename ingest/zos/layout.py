"""Byte offsets of the record parts the readers use, each from the public layout named beside it
(../shared/ZOS-RECORDS.md; docs/zos-traces.md lists them with their sources). Big-endian
binary, EBCDIC text. The writers (tests' data, `generate --trace-format`) use the same table."""

from __future__ import annotations

import codecs

# SMF record header, type 102 (z/OS standard SMF header; SM102END by decoders' offset).
SMF_TYPE = 5  # SMFxRTY, 1 byte
SMF_TIME = 6  # 1/100 s since midnight
SMF_DATE = 10  # packed 0cyydddF
SMF_SID = 14  # system id, 4 EBCDIC
SMF_SSI = 18  # DB2 subsystem id, 4 EBCDIC
SMF_HEADER = 28  # the self-defining section begins here
SMF_RECORD_TYPE = 102

# Segment descriptor (RDW byte 2) of spanned SMF records.
SEG_WHOLE, SEG_FIRST, SEG_LAST, SEG_MIDDLE = 0, 1, 2, 3

# GTF writer header DSNDQWGT (IBM: "GTF writer header section").
GTF_AID = 4
GTF_FID = 5
GTF_TIME = 6  # 8 bytes, GTF TIME=YES
GTF_EID = 14  # X'EFB9'
GTF_ASCB = 16
GTF_JOBN = 20
GTF_DLEN = 28  # QWGTDLEN: bytes from offset 28 to the record's end
GTF_DSCC = 30  # QWGTDSCC: 0 complete, 1 first, 3 middle, 2 last segment
GTF_SSID = 32
GTF_WSEQ = 36
GTF_HEADER = 40  # QWGTEND: the self-defining section (first segment) or data (later ones)
GTF_EVENT_ID = 0xEFB9
GTF_MAX_SEGMENT = 256  # DB2 spans records longer than GTF's 256 bytes of user data

# Self-defining section: triplets of (offset from the record start F, item length H, count H).
SDS_ITEM = 8
SDS_OFFSET, SDS_LENGTH, SDS_COUNT = 0, 4, 6

# Product section standard header DSNDQWHS.
QWHSLEN = 0x00  # H
QWHSTYP = 0x02  # X, 1 = standard header
QWHSRMID = 0x03
QWHSIID = 0x04  # H, the IFCID
QWHSNSDA = 0x06  # X, number of data sections
QWHSRN = 0x07
QWHSACE = 0x08  # A
QWHSSSID = 0x0C  # 4 EBCDIC
QWHSSTCK = 0x10  # 8-byte STCK
QWHSISEQ = 0x18
QWHSWSEQ = 0x1C
QWHS_MIN = 0x20  # the header up to and including QWHSWSEQ

# IFCID 198 data section (field list: Responsive Systems' slides; offsets derived).
QW0198DB, QW0198OB, QW0198BP, QW0198FC, QW0198PS, QW0198AT, QW0198PN, QW0198AC = 0, 2, 4, 5, 6, 7, 8, 12
QW0198P, QW0198PT = 16, 20  # DB2 12: flag byte (X'80' page number relative to partition), partition
QW0198_LENGTHS = (16, 24)  # before DB2 12, and with the partition fields
QW0198P_RELATIVE = 0x80

# IFCID 006 (read I/O start) and 007 (read I/O stop) data sections (offsets derived).
QW0006DB, QW0006OB, QW0006BP, QW0006PN, QW0006F, QW0006AC = 0, 2, 4, 8, 11, 12
QW0006_LENGTH = 16
QW0007MM, QW0007DB, QW0007OB, QW0007AC, QW0007NP = 0, 4, 6, 8, 12
QW0007_LENGTHS = (14, 16)  # 14 bytes of fields; a fullword-aligned section may pad to 16

IFCID_GETPAGE, IFCID_READ_START, IFCID_READ_END = 198, 6, 7

# STCK: bit 51 is one microsecond; microseconds from 1900-01-01 to 1970-01-01.
STCK_US_SHIFT = 12
STCK_EPOCH_US = 2_208_988_800 * 1_000_000

EBCDIC = "cp037"
E = {c: codecs.encode(c, EBCDIC)[0] for c in "GSRHMNLDC"}  # the letters of the code fields


def ebcdic(b: bytes) -> str:
    return codecs.decode(b, EBCDIC).strip(" \x00")


def stck_from_us(epoch_us: int) -> int:
    return (epoch_us + STCK_EPOCH_US) << STCK_US_SHIFT


def us_from_stck(stck: int) -> int:
    return (stck >> STCK_US_SHIFT) - STCK_EPOCH_US
