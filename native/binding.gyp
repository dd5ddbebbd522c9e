{
  # netlink-native: ctnetlink (conntrack) and IPVS generic netlink over plain N-API.
  # Linux only: on other systems there is no target and the loader (lib/index.ts)
  # throws a clear error; native/scripts/build.mjs skips the build there.
  "targets": [
    {
      "target_name": "netlink_native",
      "conditions": [
        ["OS=='linux'", {
          "sources": [
            "src/addon.c",
            "src/addon_handle.c",
            "src/napi_args.c",
            "src/napi_values.c",
            "src/ct_napi.c",
            "src/ct_tuples_napi.c",
            "src/ct_scan_napi.c",
            "src/ct_events_napi.c",
            "src/ipvs_napi.c",
            "src/netlink.c",
            "src/ct_filter.c",
            "src/ct_parse.c",
            "src/ct_records.c",
            "src/conntrack.c",
            "src/ct_tuple_delete.c",
            "src/ct_scan.c",
            "src/netns.c",
            "src/nl_batch.c",
            "src/genl.c",
            "src/ipvs.c",
            "src/ct_index.c",
            "src/ct_bpf.c",
            "src/ct_tuple_get.c",
            "src/ct_events.c",
            "src/reuseport.c",
            "src/reuseport_napi.c"
          ],
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
