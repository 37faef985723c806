#!/bin/sh
# Copy the code objects built by `cargo test -p amdgpu-isa` into the fuzz seed corpus.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
builds="$here/../../../../target/tmp/amdgpu-corpus"
mkdir -p "$here/corpus/code_object_parse"
cp "$builds"/*.co "$here/corpus/code_object_parse/"
ls "$here/corpus/code_object_parse" | wc -l
