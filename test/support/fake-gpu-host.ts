// A made-up Linux host for the GPU diagnosis (src/engine/inference/gpu-host.ts): files by
// path (folders follow from them), an environment, device nodes this process may not
// open, and a record of every path read, so a test can also say what was never looked at.
import type { HostView } from "../../src/engine/inference/gpu-host.ts";

export interface FakeHost extends HostView {
  /** Every path the diagnosis listed, tested or read, in order. */
  touched: string[];
}

export function fakeHost(opts: { files?: Record<string, string>; env?: Record<string, string>; closed?: string[]; platform?: string } = {}): FakeHost {
  const files = new Map(Object.entries(opts.files ?? {}));
  const touched: string[] = [];
  return {
    platform: opts.platform ?? "linux",
    arch: "x64",
    touched,
    env: (name) => opts.env?.[name],
    list(dir) {
      touched.push(dir);
      const prefix = dir.endsWith("/") ? dir : `${dir}/`;
      const names = new Set<string>();
      for (const path of files.keys()) if (path.startsWith(prefix)) names.add(path.slice(prefix.length).split("/")[0]!);
      return names.size ? [...names] : undefined;
    },
    isFile(path) {
      touched.push(path);
      return files.has(path);
    },
    readText(path) {
      touched.push(path);
      return files.get(path);
    },
    canOpen(path) {
      touched.push(path);
      return opts.closed?.includes(path) ? "no" : "yes";
    },
  };
}

/** A stock Debian amd64 host's library folders (ld.so.conf and its include). */
export const DEBIAN_LD_CONF = {
  "/etc/ld.so.conf": "include /etc/ld.so.conf.d/*.conf\n",
  "/etc/ld.so.conf.d/x86_64-linux-gnu.conf": "# Multiarch support\n/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n",
};

export const LIB = "/usr/lib/x86_64-linux-gnu";

/** NVIDIA's ICD file as its driver installs it. */
export const NVIDIA_ICD = JSON.stringify({ file_format_version: "1.0.1", ICD: { library_path: "libGLX_nvidia.so.0", api_version: "1.4.312" } });

/** The device nodes of one NVIDIA GPU. */
export const NVIDIA_NODES = { "/dev/nvidia0": "", "/dev/nvidiactl": "", "/dev/nvidia-uvm": "" };
