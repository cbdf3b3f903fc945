/* A plugin file's ELF header read by hand: glibc says "cannot open shared
 * object file: No such file or directory" of another machine's .so, and
 * "invalid ELF header" of a text file, where a linker's hint fits neither. */
#define _GNU_SOURCE /* memmem */
#include "registry_elf.h"

#include <ctype.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* This build's ELF identity: a plugin must match it to load at all. */
#if defined(__x86_64__)
#define NATIVE_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define NATIVE_MACHINE EM_AARCH64
#elif defined(__i386__)
#define NATIVE_MACHINE EM_386
#elif defined(__arm__)
#define NATIVE_MACHINE EM_ARM
#elif defined(__powerpc64__)
#define NATIVE_MACHINE EM_PPC64
#elif defined(__s390x__)
#define NATIVE_MACHINE EM_S390
#elif defined(__riscv)
#define NATIVE_MACHINE EM_RISCV
#else
#define NATIVE_MACHINE EM_NONE /* not judged */
#endif
#define NATIVE_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)
#define NATIVE_DATA (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB)

static const struct {
    uint16_t em;
    const char *name;
} machines[] = {{EM_X86_64, "x86-64"}, {EM_AARCH64, "aarch64"}, {EM_386, "i386"}, {EM_ARM, "arm"},
                {EM_PPC64, "ppc64"},   {EM_S390, "s390x"},     {EM_RISCV, "riscv"}};

static const char *machine_name(uint16_t em, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof machines / sizeof *machines; i++)
        if (machines[i].em == em)
            return machines[i].name;
    snprintf(buf, len, "ELF machine %u", em);
    return buf;
}

/* `; it starts with "..."` when the file begins as text (a linker script
 * named libfoo.so, a config file): what the file is, at a glance. */
static void text_start(const unsigned char *head, size_t n, char *buf, size_t len)
{
    size_t k = 0;
    while (k < n && k < 24 && head[k] >= 0x20 && head[k] < 0x7f)
        k++;
    buf[0] = '\0';
    if (k >= 4 && (k == n || k == 24 || head[k] == '\n' || head[k] == '\r' || head[k] == '\t'))
        snprintf(buf, len, "; it starts with \"%.*s\"", (int)k, (const char *)head);
}

/* Why the file at path is no shared object this process can load, judged
 * from its ELF header, into why; false when the header is fine (the
 * failure lies elsewhere: a dependency, a symbol).  glibc says "cannot
 * open shared object file: No such file or directory" of another
 * machine's .so, and a linker's hint fits neither case. */
bool dlg_plugin_not_loadable(const char *path, const char *msg, char *why, size_t whylen)
{
    unsigned char head[64] = {0}; /* e_ident, e_type, e_machine; text to show */
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    const char *nso = "not a shared object (ELF) file";
    if (n < EI_NIDENT + 4 || memcmp(head, ELFMAG, SELFMAG) != 0) {
        char start[48];
        text_start(head, n, start, sizeof start);
        snprintf(why, whylen, "%s (%s%s)", nso, msg, start);
        return true;
    }
    if (head[EI_CLASS] != NATIVE_CLASS || head[EI_DATA] != NATIVE_DATA) {
        snprintf(why, whylen, "%s for this machine: a %s %s-endian ELF file, this dlgauge is %s %s-endian "
                 "(build the plugin here)", nso, head[EI_CLASS] == ELFCLASS32 ? "32-bit" : "64-bit",
                 head[EI_DATA] == ELFDATA2MSB ? "big" : "little", NATIVE_CLASS == ELFCLASS32 ? "32-bit" : "64-bit",
                 NATIVE_DATA == ELFDATA2MSB ? "big" : "little");
        return true;
    }
    uint16_t type, em; /* e_type and e_machine: at 16 and 18 in either class, in native order (checked) */
    memcpy(&type, head + EI_NIDENT, 2);
    memcpy(&em, head + EI_NIDENT + 2, 2);
    char a[32], b[32];
    if (NATIVE_MACHINE != EM_NONE && em != NATIVE_MACHINE) {
        snprintf(why, whylen, "%s for this machine: built for %s, this dlgauge runs on %s (build the plugin "
                 "here)", nso, machine_name(em, a, sizeof a), machine_name(NATIVE_MACHINE, b, sizeof b));
        return true;
    }
    if (type != ET_DYN || strstr(msg, "cannot dynamically load")) {
        snprintf(why, whylen, "%s: %s (link the plugin with -shared, as dlg_add_plugin does)", nso,
                 type == ET_REL ? "an object file (.o)" : type == ET_CORE ? "a core dump" : "an executable");
        return true;
    }
    return false;
}

/* The bytes of [off, off + len) of fd read fully; false when short. */
static bool read_at(int fd, void *buf, size_t len, uint64_t off)
{
    return pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

/* dlopen maps each PT_LOAD segment and touches its bytes: a segment
 * reaching past the end of a truncated file (an interrupted copy or
 * install) is a SIGBUS in glibc, before any error can be returned. */
bool dlg_plugin_truncated(const char *path, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    ElfW(Ehdr) eh;
    bool cut = false;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read_at(fd, &eh, sizeof eh, 0) &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == NATIVE_CLASS &&
        eh.e_ident[EI_DATA] == NATIVE_DATA && eh.e_phentsize == sizeof(ElfW(Phdr))) {
        uint64_t size = (uint64_t)st.st_size, need = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr));
        for (unsigned i = 0; need <= size && i < eh.e_phnum; i++) {
            ElfW(Phdr) ph;
            if (!read_at(fd, &ph, sizeof ph, eh.e_phoff + (uint64_t)i * sizeof ph))
                break;
            if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > need)
                need = ph.p_offset + ph.p_filesz;
        }
        if ((cut = need > size))
            snprintf(why, whylen, "truncated shared object: its loadable segments need %llu bytes, the file has "
                     "%llu (an interrupted copy or install, or a link still being written? rebuild or "
                     "reinstall it)", (unsigned long long)need, (unsigned long long)size);
    }
    close(fd);
    return cut;
}

/* Whether c may be part of a name, so that "xresnet50" is not "resnet50". */
static bool name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

bool dlg_plugin_names(const char *path, const char *name)
{
    char buf[4096]; /* read in pieces: under the ulimit -v that failed the load, no room for the file */
    size_t n = strlen(name) + 1; /* with its NUL: a string of the file's own */
    if (n < 2 || n > sizeof buf / 2)
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool found = false, first = true;
    size_t have = 0;
    ssize_t got;
    while (!found && (got = read(fd, buf + have, sizeof buf - have)) > 0) {
        have += (size_t)got;
        /* a match at buf[0] after the first piece is the kept tail, judged already */
        for (const char *p = buf + (first ? 0 : 1); !found && p < buf + have; p++) {
            if (!(p = memmem(p, (size_t)(buf + have - p), name, n)))
                break;
            found = p == buf || !name_char(p[-1]);
        }
        size_t keep = have < n ? have : n; /* a match across two pieces */
        memmove(buf, buf + have - keep, keep);
        have = keep;
        first = false;
    }
    close(fd);
    return found;
}
