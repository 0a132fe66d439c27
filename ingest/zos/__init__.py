"""DB2 for z/OS performance trace records (IFCID 198 getpages, 006/007 read I/Os) as a shop
captures them: SMF type 102 or GTF data sets, or OMEGAMON PE's record-trace text. Byte layouts and
where each offset comes from: docs/zos-traces.md."""
