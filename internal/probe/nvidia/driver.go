package nvidia

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/devctl/devctl/internal/guard"
	"github.com/devctl/devctl/internal/host"
	"github.com/devctl/devctl/internal/hw/pci"
	"github.com/devctl/devctl/internal/probe"
)

// Driver probes NVIDIA GPUs: NVML first, nvidia-smi when NVML cannot load,
// and the kernel module version from /proc in either case.
type Driver struct{}

// New returns the driver.
func New() *Driver { return &Driver{} }

// Name implements probe.Driver.
func (*Driver) Name() string { return "nvidia" }

// Probe implements probe.Driver. Result.Raw is always a *Raw (also on
// failure) so doctor can read the NVML return code and the fallback's error.
func (*Driver) Probe(ctx context.Context, h *host.Host) (probe.Result, error) {
	a, err := host.Once(h, answersKey, func() (answers, error) { return probeNow(ctx, h) })
	return a.res, err
}

// answersKey is where a Host keeps what the driver learned on it.
const answersKey = "nvidia.answers"

// answers are what the driver learned from one Host: the report's result
// and the raw NVML or nvidia-smi answers behind it.
type answers struct {
	res probe.Result
	raw *Raw
}

// Answers are the raw NVML or nvidia-smi answers the driver got on h, also
// when no GPU could be listed (they say why), for doctor's NVIDIA checks.
// ok is false when the driver has not run on h or has not finished (a hung
// NVML): Answers never waits.
func Answers(h *host.Host) (raw *Raw, ok bool) {
	a, _, ok := host.Done[answers](h, answersKey)
	return a.raw, ok && a.raw != nil
}

func probeNow(ctx context.Context, h *host.Host) (answers, error) {
	var res probe.Result
	km, hasKM := kernelModule(h)
	if hasKM {
		res.Host = &probe.HostInfo{NvidiaKernelMod: probe.Ptr(km.Version)}
	}

	raw, nvmlWhy := queryNVML(ctx, h)
	if err := ctx.Err(); err != nil {
		return answers{res: res}, err
	}
	if raw.Usable() {
		return finish(res, raw, km, hasKM, SourceNVML, "")
	}

	smi, smiWhy, err := querySMI(ctx, h)
	smi.InitRet, smi.NVMLError = raw.InitRet, raw.NVMLError
	a := answers{res: res, raw: smi}
	if ctx.Err() != nil {
		return a, ctx.Err()
	}
	switch {
	case err == nil:
		return finish(res, smi, km, hasKM, SourceNVIDIASMI, nvmlWhy)
	case errors.Is(err, errSMIMissing):
		smi.SMIError = smiWhy
	case errors.Is(err, errNoDevices):
		smi.SMIError = smiWhy
		return a, probe.Absent("%s; %s", nvmlWhy, smiWhy)
	default:
		smi.SMIError = smiWhy
		return a, fmt.Errorf("%s; %s", nvmlWhy, smiWhy)
	}

	// Neither NVML nor nvidia-smi could list GPUs.
	if brokenInit(raw) {
		return a, fmt.Errorf("%s; %s", nvmlWhy, smiWhy)
	}
	if hasKM {
		if !h.Exists("/dev/nvidiactl") {
			return a, probe.Absent("NVIDIA kernel module %s is loaded but /dev/nvidiactl is missing here (a container without GPU access?); %s; %s", km.Version, nvmlWhy, smiWhy)
		}
		return a, fmt.Errorf("NVIDIA kernel module %s is loaded but no GPU could be listed: %s; %s", km.Version, nvmlWhy, smiWhy)
	}
	return a, probe.Absent("%s; %s", nvmlWhy, smiWhy)
}

// brokenInit is an NVML init failure that means an NVIDIA stack is installed
// but not working (as opposed to simply absent).
func brokenInit(r *Raw) bool {
	if r == nil || r.InitRet == nil {
		return false
	}
	switch *r.InitRet {
	case Success, ErrLibraryNotFound, ErrDriverNotLoaded:
		return false
	}
	return true
}

func finish(res probe.Result, raw *Raw, km KernelModule, hasKM bool, source, fallbackWhy string) (answers, error) {
	res.Source = source
	if len(raw.GPUs) == 0 {
		if hasKM {
			return answers{res, raw}, probe.Absent("%s found no NVIDIA GPU (kernel module %s is loaded)", source, km.Version)
		}
		return answers{res, raw}, probe.Absent("%s found no NVIDIA GPU", source)
	}
	res.Devices = Devices(raw)
	res.Platform = Platform(raw)
	if hasKM {
		res.Platform.KernelModuleVersion = probe.Ptr(km.Version)
	}
	res.Detail = Detail(raw)
	if fallbackWhy != "" {
		res.Detail += "; fallback: " + fallbackWhy
	}
	return answers{res, raw}, nil
}

func kernelModule(h *host.Host) (KernelModule, bool) {
	if h == nil || h.FS == nil {
		return KernelModule{}, false
	}
	b, err := h.FS.ReadFile(ProcVersionPath)
	if err != nil {
		return KernelModule{}, false
	}
	km, err := ParseKernelModule(b)
	if err != nil {
		return KernelModule{}, false
	}
	return km, true
}

// queryNVML asks the host's NVML source, honouring ctx even if the source
// does not (a wedged driver can block inside nvmlInit). It always returns a
// Raw (possibly with only InitRet or NVMLError) and a reason phrase for
// when NVML is not usable.
func queryNVML(ctx context.Context, h *host.Host) (*Raw, string) {
	if h == nil || h.NVML == nil {
		return &Raw{Version: RawVersion, Source: SourceNVML}, "NVML not available"
	}
	if why := noNVIDIAHere(h); why != "" {
		return &Raw{Version: RawVersion, Source: SourceNVML}, why
	}
	b, err := guard.Run(ctx, 0, h.NVML.Query)
	switch {
	case errors.Is(err, guard.ErrPanic):
		err = fmt.Errorf("NVML query %w", err)
	case ctx.Err() != nil:
		return &Raw{Version: RawVersion, Source: SourceNVML, NVMLError: ctx.Err().Error()}, "NVML did not answer: " + ctx.Err().Error()
	}
	if err != nil {
		return &Raw{Version: RawVersion, Source: SourceNVML, NVMLError: err.Error()}, "NVML query failed: " + err.Error()
	}
	raw, err := Decode(b)
	if err != nil {
		return &Raw{Version: RawVersion, Source: SourceNVML, NVMLError: err.Error()}, err.Error()
	}
	switch {
	case raw.InitRet == nil:
		return raw, "NVML was not initialised"
	case *raw.InitRet == ErrLibraryNotFound:
		return raw, "NVML library not found"
	case *raw.InitRet != Success:
		return raw, "NVML init failed: " + raw.InitRet.String()
	case !raw.DeviceCount.OK():
		code := ErrUnknown
		if raw.DeviceCount != nil {
			code = raw.DeviceCount.Ret
		}
		return raw, "NVML could not count GPUs: " + code.String()
	}
	return raw, ""
}

var (
	errSMIMissing = errors.New("nvidia-smi missing")
	errNoDevices  = errors.New("no devices")
)

// querySMI runs the documented nvidia-smi query interface and the CUDA line
// of `nvidia-smi -q`, and returns NVML-style answers.
func querySMI(ctx context.Context, h *host.Host) (*Raw, string, error) {
	raw := &Raw{Version: RawVersion, Source: SourceNVIDIASMI}
	if h == nil || h.Runner == nil {
		return raw, "nvidia-smi not on PATH", errSMIMissing
	}
	if _, err := h.Runner.LookPath("nvidia-smi"); err != nil {
		if errors.Is(err, host.ErrNotAllowed) {
			return raw, "nvidia-smi not allowed", errSMIMissing
		}
		return raw, "nvidia-smi not on PATH", errSMIMissing
	}
	fields := QueryFields
	out, err := h.Runner.Run(ctx, "nvidia-smi", QueryArgs(fields)...)
	if err != nil && ctx.Err() == nil && mentionsInvalidField(out, err, "compute_cap") {
		// nvidia-smi before R510 has no compute_cap field.
		fields = QueryFieldsLegacy
		out, err = h.Runner.Run(ctx, "nvidia-smi", QueryArgs(fields)...)
	}
	if err != nil {
		if ctx.Err() != nil {
			return raw, "nvidia-smi did not answer: " + ctx.Err().Error(), ctx.Err()
		}
		if errors.Is(err, host.ErrNotFound) {
			return raw, "nvidia-smi not on PATH", errSMIMissing
		}
		msg := oneLine(err.Error())
		if strings.Contains(strings.ToLower(msg+string(out)), "no devices were found") {
			return raw, "nvidia-smi: no devices were found", errNoDevices
		}
		return raw, "nvidia-smi failed: " + msg, err
	}
	q, err := ParseQueryGPU(out, fields)
	if err != nil {
		return raw, "nvidia-smi output not understood: " + err.Error(), err
	}
	raw.GPUs = q.GPUs
	raw.DriverVersion = q.DriverVersion
	raw.DeviceCount = Ok(len(q.GPUs))
	raw.CUDADriverVersion = smiCUDAVersion(ctx, h)
	if ctx.Err() != nil {
		return raw, "nvidia-smi -q did not answer: " + ctx.Err().Error(), ctx.Err()
	}
	return raw, "", nil
}

// CUDAVersionArgs ask nvidia-smi -q for its smallest section: the header,
// which carries "CUDA Version", is printed whatever -d selects, and the full
// -q report takes seconds on a many-GPU machine. Plain -q is the fallback.
var CUDAVersionArgs = []string{"-q", "-d", "COMPUTE"}

// smiCUDAVersion reads the CUDA version from the header of nvidia-smi -q. A
// failure leaves it unknown: the GPUs were already listed.
func smiCUDAVersion(ctx context.Context, h *host.Host) *Answer[int] {
	for _, args := range [][]string{CUDAVersionArgs, {"-q"}} {
		out, err := h.Runner.Run(ctx, "nvidia-smi", args...)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			continue
		}
		if v, ok := ParseCUDAVersion(out); ok {
			return Ok(v)
		}
		return Fail[int](ErrNotSupported)
	}
	return Fail[int](ErrUnknown)
}

func mentionsInvalidField(out []byte, err error, field string) bool {
	s := string(out) + " " + err.Error()
	return strings.Contains(s, field) && strings.Contains(s, "not a valid field")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, 200)
}

// noNVIDIAHere says why loading NVML is pointless, or "" when it is worth
// a try. Loading the library searches a dozen directories even where it is
// not installed, which is most of what a CPU-only probe would spend on
// NVIDIA; so NVML is skipped when the PCI bus is visible and shows no
// NVIDIA function and there is no driver, device node or WSL GPU bridge.
// A host whose bus cannot be read gets the benefit of the doubt.
func noNVIDIAHere(h *host.Host) string {
	for _, p := range []string{"/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg"} {
		if h.Exists(p) {
			return ""
		}
	}
	devs, err := pci.Scan(h)
	if err != nil {
		return ""
	}
	for _, d := range devs {
		if d.Vendor == pci.VendorNVIDIA {
			return ""
		}
	}
	return "no NVIDIA device on the PCI bus, no NVIDIA driver loaded (NVML not tried)"
}
