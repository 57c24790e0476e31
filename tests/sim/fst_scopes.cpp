// SPDX-License-Identifier: Apache-2.0
// fst_scopes FILE.fst: prints the waveform's first and last timestamps ("start T", "end T", in
// its time unit) and then every variable's full name, its scopes joined with '.', one per line,
// for the shell tests of --trace-window and --trace-scope. Exit 1 if the file does not open.
#include <cstdio>
#include <string>
#include <vector>

#include <gtkwave/fstapi.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fst_scopes FILE.fst\n");
    return 2;
  }
  void* reader = fstReaderOpen(argv[1]);
  if (reader == nullptr) {
    std::fprintf(stderr, "fst_scopes: %s: not a readable FST file\n", argv[1]);
    return 1;
  }
  std::printf("start %llu\nend %llu\n",
              static_cast<unsigned long long>(fstReaderGetStartTime(reader)),
              static_cast<unsigned long long>(fstReaderGetEndTime(reader)));
  std::vector<std::string> scopes;
  fstReaderIterateHierRewind(reader);
  while (fstHier* h = fstReaderIterateHier(reader)) {
    if (h->htyp == FST_HT_SCOPE) {
      scopes.emplace_back(h->u.scope.name);
    } else if (h->htyp == FST_HT_UPSCOPE && !scopes.empty()) {
      scopes.pop_back();
    } else if (h->htyp == FST_HT_VAR) {
      std::string name;
      for (const std::string& s : scopes) {
        name += s + ".";
      }
      std::printf("%s%s\n", name.c_str(), h->u.var.name);
    }
  }
  fstReaderClose(reader);
  return 0;
}
