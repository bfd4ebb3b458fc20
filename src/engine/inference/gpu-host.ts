// What a Linux host offers a WebGPU adapter, read from its files: the GPU device nodes,
// where the dynamic linker finds libraries, and the Vulkan driver descriptions (ICD files)
// the Vulkan loader would read. Read through a HostView, so the diagnosis (gpu-doctor.ts)
// runs on a made-up host in tests. No subprocess (Deno may lack --allow-run) and no call
// that throws: a file that cannot be read is a file that is not there.
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";

/** The host as the diagnosis sees it. Every method answers; none throws. */
export interface HostView {
  platform: string;
  arch: string;
  env(name: string): string | undefined;
  /** The names in a folder; undefined when it is missing or unreadable. */
  list(dir: string): string[] | undefined;
  /** A file (or a link to one) that exists. */
  isFile(path: string): boolean;
  readText(path: string): string | undefined;
  /** Whether this process may open a device node for reading and writing; "unknown" when it cannot tell. */
  canOpen(path: string): "yes" | "no" | "unknown";
}

/** This process's host, through node:fs (which Deno provides too). */
export function realHost(): HostView {
  return {
    platform: process.platform,
    arch: process.arch,
    env(name) {
      try {
        return process.env[name];
      } catch {
        return undefined; // Deno without --allow-env
      }
    },
    list(dir) {
      try {
        return readdirSync(dir);
      } catch {
        return undefined;
      }
    },
    isFile(path) {
      try {
        return existsSync(path) && statSync(path).isFile();
      } catch {
        return false;
      }
    },
    readText(path) {
      try {
        return readFileSync(path, "utf8");
      } catch {
        return undefined;
      }
    },
    canOpen(path) {
      try {
        accessSync(path, constants.R_OK | constants.W_OK);
        return "yes";
      } catch (err) {
        // EACCES: the node's mode or group keeps this user out. Anything else (Deno without
        // --allow-read, a node gone meanwhile) says nothing about the device.
        return (err as { code?: string }).code === "EACCES" ? "no" : "unknown";
      }
    },
  };
}

/** A GPU device node and what kind of GPU stands behind it. */
export interface GpuDevice {
  path: string;
  /** nvidia: NVIDIA's driver; virtual: a VM's display adapter (no Vulkan GPU); other: a render node of Intel, AMD, ... or unknown. */
  kind: "nvidia" | "other" | "virtual";
  /** The node is one of the GPU's own (nvidia0, renderD128), not a control node (nvidiactl, nvidia-uvm). */
  gpu: boolean;
}

/** PCI vendor ids of virtual display adapters (virtio, VMware, QEMU's bochs, Red Hat's qxl), which offer no Vulkan GPU. */
const VIRTUAL_VENDORS = new Set(["0x1af4", "0x15ad", "0x1234", "0x1b36"]);
const NVIDIA_VENDOR = "0x10de";

/** /dev/nvidia* and /dev/dri/renderD*: the nodes a GPU driver makes. */
export function gpuDevices(host: HostView): GpuDevice[] {
  const out: GpuDevice[] = [];
  for (const name of (host.list("/dev") ?? []).filter((n) => n.startsWith("nvidia")).sort()) {
    out.push({ path: `/dev/${name}`, kind: "nvidia", gpu: /^nvidia\d+$/.test(name) });
  }
  for (const name of (host.list("/dev/dri") ?? []).filter((n) => /^renderD\d+$/.test(n)).sort()) {
    // The driver's PCI vendor, where sysfs can be read; unreadable counts as a real GPU.
    const vendor = host.readText(`/sys/class/drm/${name}/device/vendor`)?.trim().toLowerCase();
    const kind = vendor === NVIDIA_VENDOR ? "nvidia" : vendor && VIRTUAL_VENDORS.has(vendor) ? "virtual" : "other";
    out.push({ path: `/dev/dri/${name}`, kind, gpu: kind !== "virtual" });
  }
  return out;
}

const MULTIARCH: Record<string, string> = { x64: "x86_64-linux-gnu", arm64: "aarch64-linux-gnu" };

/**
 * The folders the dynamic linker searches, in its order: LD_LIBRARY_PATH, then those that
 * /etc/ld.so.conf names (its `include` globs followed), then the built-in ones.
 */
export function libraryDirs(host: HostView): string[] {
  const dirs: string[] = [];
  for (const d of (host.env("LD_LIBRARY_PATH") ?? "").split(/[:;]/)) if (d) dirs.push(d);
  readLdConf(host, "/etc/ld.so.conf", dirs, 0);
  const triplet = MULTIARCH[host.arch];
  if (triplet) dirs.push(`/lib/${triplet}`, `/usr/lib/${triplet}`);
  dirs.push("/lib64", "/usr/lib64", "/lib", "/usr/lib");
  return [...new Set(dirs)];
}

function readLdConf(host: HostView, file: string, dirs: string[], depth: number): void {
  if (depth > 4) return;
  for (const raw of (host.readText(file) ?? "").split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const include = /^include\s+(.+)$/.exec(line);
    if (!include) {
      if (line.startsWith("/")) dirs.push(line);
      continue;
    }
    for (const pattern of include[1]!.split(/\s+/)) {
      const path = isAbsolute(pattern) ? pattern : join(dirname(file), pattern);
      for (const f of expandGlob(host, path)) readLdConf(host, f, dirs, depth + 1);
    }
  }
}

/** A glob whose wildcards are in its last part only (ld.so.conf's `include /etc/ld.so.conf.d/*.conf`). */
function expandGlob(host: HostView, path: string): string[] {
  const dir = dirname(path);
  const base = path.slice(dir.length + 1);
  if (!/[*?[]/.test(base)) return [path];
  const re = new RegExp(`^${base.replace(/[.+^${}()|\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
  return (host.list(dir) ?? []).filter((n) => re.test(n)).sort().map((n) => join(dir, n));
}

/** Where the dynamic linker would find a library by its file name, if it would. */
export function findLibrary(host: HostView, name: string, dirs: string[] = libraryDirs(host)): string | undefined {
  for (const d of dirs) {
    const path = join(d, name);
    if (host.isFile(path)) return path;
  }
  return undefined;
}

/** A Vulkan driver description (ICD file) and the library it names. */
export interface VulkanIcd {
  file: string;
  /** ICD.library_path as written; undefined when the file is not a readable ICD. */
  library?: string;
  /** Where that library is, when it can be found. */
  libraryFound?: string;
  /** Mesa's software driver (lavapipe), NVIDIA's, or another. */
  vendor: "software" | "nvidia" | "other";
}

/**
 * The ICD files the Vulkan loader reads: VK_DRIVER_FILES (or the older VK_ICD_FILENAMES)
 * when set, each a file or a folder, replacing the search; else the standard folders
 * (XDG_CONFIG_DIRS, /etc, XDG_DATA_DIRS, ~/.local/share), plus VK_ADD_DRIVER_FILES.
 */
export function loaderIcdPaths(host: HostView): { files: string[]; fromEnv?: string } {
  const named = host.env("VK_DRIVER_FILES") ? "VK_DRIVER_FILES" : host.env("VK_ICD_FILENAMES") ? "VK_ICD_FILENAMES" : undefined;
  const entries = (v: string | undefined) => (v ?? "").split(":").filter(Boolean);
  const added = entries(host.env("VK_ADD_DRIVER_FILES"));
  if (named) return { files: expandIcdEntries(host, [...entries(host.env(named)), ...added]), fromEnv: named };
  const configDirs = entries(host.env("XDG_CONFIG_DIRS") || "/etc/xdg");
  const dataDirs = entries(host.env("XDG_DATA_DIRS") || "/usr/local/share:/usr/share");
  const home = host.env("XDG_DATA_HOME") || (host.env("HOME") ? `${host.env("HOME")}/.local/share` : undefined);
  const folders = [...configDirs.map((d) => `${d}/vulkan/icd.d`), "/etc/vulkan/icd.d", ...dataDirs.map((d) => `${d}/vulkan/icd.d`), ...(home ? [`${home}/vulkan/icd.d`] : [])];
  return { files: expandIcdEntries(host, [...added, ...folders]) };
}

/** Folders the loader does not search where GPU hosts put NVIDIA's ICD (GKE, driver containers). */
export const UNSEARCHED_ICD_DIRS = ["/usr/local/nvidia/share/vulkan/icd.d", "/usr/local/nvidia/vulkan/icd.d", "/usr/local/nvidia/icd.d"];

/** Folders off the linker's path where GPU hosts put NVIDIA's libraries. */
export const UNSEARCHED_LIBRARY_DIRS = ["/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"];

function expandIcdEntries(host: HostView, entries: string[]): string[] {
  const files: string[] = [];
  for (const e of entries) {
    const inside = host.isFile(e) ? undefined : host.list(e);
    if (inside) files.push(...inside.filter((n) => n.endsWith(".json")).sort().map((n) => join(e, n)));
    else files.push(e);
  }
  return [...new Set(files)];
}

/** Reads each ICD file and looks for the library it names (a bare name on the linker's path, a relative one beside the file). */
export function readIcds(host: HostView, files: string[], dirs: string[] = libraryDirs(host)): VulkanIcd[] {
  return files
    .filter((f) => host.isFile(f))
    .map((file) => {
      let library: string | undefined;
      try {
        const json = JSON.parse(host.readText(file) ?? "") as { ICD?: { library_path?: unknown } };
        if (typeof json.ICD?.library_path === "string") library = json.ICD.library_path;
      } catch {
        // not an ICD file: listed without a library
      }
      const libraryFound = library === undefined ? undefined : !library.includes("/") ? findLibrary(host, library, dirs) : locate(host, isAbsolute(library) ? library : join(dirname(file), library));
      return { file, library, libraryFound, vendor: icdVendor(file, library) };
    });
}

const locate = (host: HostView, path: string) => (host.isFile(path) ? path : undefined);

function icdVendor(file: string, library: string | undefined): VulkanIcd["vendor"] {
  const text = `${file} ${library ?? ""}`;
  if (/nvidia/i.test(text)) return "nvidia";
  if (/lvp|lavapipe|swiftshader/i.test(text)) return "software";
  return "other";
}
