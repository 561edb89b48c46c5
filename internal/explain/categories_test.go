package explain

// Categories lists every category in documentation order.
func Categories() []Category {
	return []Category{
		CategoryOutOfMemory, CategoryXLAResourceExhausted, CategoryDeviceMismatch,
		CategoryDTypeMismatch, CategoryUnsupportedDType, CategoryMPSPlaceholderStorage,
		CategoryMPSUnsupportedOp, CategoryCUDADriverMismatch, CategoryNoGPUFound,
		CategoryCUDALaunchFailure, CategoryCUDNNError, CategoryNCCLError,
		CategoryXLATPUInit, CategoryROCmHIPError, CategoryOther, CategoryUnknown,
	}
}
