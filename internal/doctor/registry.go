package doctor

// All returns every check in display order: the NVIDIA stack from the bus
// up, then other vendors, the host, and the environment.
func All() []*Check {
	return []*Check{
		checkDriverLoaded, checkNVMLInit, checkVersionMatch, checkDeviceNodes, checkContainerGPU,
		checkFrameworkRuntime, checkTorchBuild, checkJAXPlugin, checkVisibleDevices, checkPersistence, checkFabric, checkPCIeLink,
		checkThrottle, checkECC, checkMIG, checkMemoryInUse, checkKernelLog,
		checkShm, checkCgroup, checkP2P,
		checkROCm, checkTPUInUse, checkTPUHugepages, checkTPUEnv,
		checkRosetta, checkMacOS, checkMPSWatermark, checkWSL, checkJetson,
		checkAVX2, checkEnvDevctl, checkEnvXLA, checkEnvPytorch,
	}
}
