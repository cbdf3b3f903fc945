# Sourced by the *-vs-fio.sh benchmarks: fio at its best with O_DIRECT.
# dlgauge's read buffers of 1 MiB and more are transparent huge pages
# (include/dlgauge/iobuf.h), which on a virtio disk makes 1 MiB direct
# reads 2-3x faster; fio's only huge-page buffers are hugetlbfs ones
# (--mem=shmhuge), which need reserved huge pages.  fio_hugepages_reserve N
# reserves N more 2 MiB pages when it can (root) and sets FIO_MEM to the
# fio option to use ("" when it could not, said on stdout);
# fio_hugepages_restore puts the old count back (call it from the EXIT trap).
FIO_MEM=""
FIO_HUGE_OLD=""
fio_hugepages_reserve() {
    local want=$1 f=${PROC_SYS_VM:-/proc/sys/vm}/nr_hugepages
    if [ -w $f ] && FIO_HUGE_OLD=$(cat $f) && echo $((FIO_HUGE_OLD + want)) >$f 2>/dev/null &&
        [ "$(cat $f)" -ge $((FIO_HUGE_OLD + want)) ]; then
        FIO_MEM=--mem=shmhuge
        echo "fio buffers: huge pages (--mem=shmhuge; $want reserved), as dlgauge's (THP)"
    else
        fio_hugepages_restore
        echo "fio buffers: malloc (no huge pages could be reserved); dlgauge's are THP where granted"
    fi
}
fio_hugepages_restore() {
    [ -n "$FIO_HUGE_OLD" ] && echo "$FIO_HUGE_OLD" >"${PROC_SYS_VM:-/proc/sys/vm}/nr_hugepages" 2>/dev/null
    FIO_HUGE_OLD=""
    return 0
}
