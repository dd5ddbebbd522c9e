{
  # netlink-native: ctnetlink (conntrack) and IPVS generic netlink over plain N-API.
  # Linux only: on other systems there is no target and the loader (lib/index.ts)
  # throws a clear error; native/scripts/build.mjs skips the build there.
  "targets": [
    {
      "target_name": "netlink_native",
      "conditions": [
        ["OS=='linux'", {
          # One folder per layer (src/README.md): wire/ the kernel's netlink formats, ops/ the
          # conntrack, IPVS and socket operations, napi/ the binding JavaScript calls.
          "sources": [
            "src/wire/netlink.c",
            "src/wire/nl_batch.c",
            "src/wire/genl.c",
            "src/wire/netns.c",
            "src/wire/ct_filter.c",
            "src/wire/ct_parse.c",
            "src/ops/conntrack.c",
            "src/ops/ct_tuple_delete.c",
            "src/ops/ct_tuple_get.c",
            "src/ops/ct_scan.c",
            "src/ops/ct_index.c",
            "src/ops/ct_bpf.c",
            "src/ops/ct_events.c",
            "src/ops/ipvs.c",
            "src/ops/reuseport.c",
            "src/napi/addon.c",
            "src/napi/addon_handle.c",
            "src/napi/napi_args.c",
            "src/napi/napi_values.c",
            "src/napi/ct_records.c",
            "src/napi/ct_napi.c",
            "src/napi/ct_tuples_napi.c",
            "src/napi/ct_scan_napi.c",
            "src/napi/ct_events_napi.c",
            "src/napi/ipvs_napi.c",
            "src/napi/reuseport_napi.c"
          ],
          # Includes name their layer: #include "wire/netlink.h".
          "include_dirs": ["src"],
          "cflags": ["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden", "-pthread"],
          "cflags!": ["-O3"],
          "defines": ["NAPI_VERSION=8", "_GNU_SOURCE"],
          # -pthread, not -lpthread: the event reader thread needs POSIX threads, which
          # glibc >= 2.34 (Debian 12's libc6, in every image) carries itself, so the
          # runtime image needs no extra library.
          "ldflags": ["-pthread"]
        }, {
          "type": "none"
        }]
      ]
    }
  ]
}
