import json, os, shutil, copy
T=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
D=T+'/doctor'
def w(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(content, bytes):
        open(path,'wb').write(content)
    else:
        open(path,'w').write(content)
def link(path, target):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path): os.remove(path)
    os.symlink(target, path)
def case(check, name, want, msg, files=None, links=None, **meta):
    d=f'{D}/{check}/{name}'
    if os.path.exists(d): shutil.rmtree(d)
    os.makedirs(d+'/root', exist_ok=True)
    for p,c in (files or {}).items():
        if p.endswith('/'):
            os.makedirs(d+'/root'+p, exist_ok=True); continue
        w(d+'/root'+p, c)
    for p,t in (links or {}).items():
        link(d+'/root'+p, t)
    # keep empty root in git
    if not os.listdir(d+'/root'): w(d+'/root/.keep','')
    meta.update(want=want, msg=msg)
    nv=meta.pop('nvml_obj', None)
    if nv is not None:
        w(d+'/nvml.json', json.dumps(nv, indent=1)+'\n'); meta['nvml']='nvml.json'
    w(d+'/case.json', json.dumps(meta, indent=1, sort_keys=True)+'\n')

def rd(p): return open(T+'/'+p).read()
PROC565=rd('nvidia/proc/open-565.57.01-ubuntu.txt')
PROC525=rd('nvidia/proc/open-525.60.11-arch.txt')
def nvpci(addr, dev='20B0', cls='30200', drv='nvidia', width=None):
    f={f'/sys/bus/pci/devices/{addr}/uevent': (f'DRIVER={drv}\n' if drv else '')+f'PCI_CLASS={cls}\nPCI_ID=10DE:{dev}\nPCI_SUBSYS_ID=10DE:134F\nPCI_SLOT_NAME={addr}\n'}
    if width:
        b=f'/sys/bus/pci/devices/{addr}/'
        f[b+'current_link_width']=f'{width[0]}\n'; f[b+'max_link_width']=f'{width[1]}\n'
        f[b+'current_link_speed']='2.5 GT/s PCIe\n'; f[b+'max_link_speed']='16.0 GT/s PCIe\n'
    return f
H100=json.load(open(T+'/nvidia/raw/h100-pcie-x2-full.json'))
def healthy():
    h=copy.deepcopy(H100)
    for g in h['gpus']:
        g['clocks_event_reasons']={'value':1,'ret':0}
        g['mig_mode']={'value':{'current':0,'pending':0},'ret':0}
        g['remapped_rows']={'value':{'correctable':0,'uncorrectable':0,'pending':False,'failure':False},'ret':0}
        g['retired_pages_pending']={'value':0,'ret':0}
        g['processes']={'value':[],'ret':0}
        g['pcie_width_current']={'value':16,'ret':0}
        g['persistence_mode']={'value':1,'ret':0}
        if g.get('power_default_limit_mw'):
            g['power_limit_mw']=copy.deepcopy(g['power_default_limit_mw'])
    return h
H2=nvpci('0000:17:00.0','2331')|nvpci('0000:65:00.0','2331')

# 1 driver_loaded
case('nvidia.driver_loaded','pass','pass','pass', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565})
case('nvidia.driver_loaded','fail','fail','nouveau', nvpci('0000:01:00.0','1C82','30000','nouveau')|{'/sys/module/nouveau/initstate':'live\n'})
# 2 nvml_init
case('nvidia.nvml_init','pass','pass','pass', H2, nvml_shared='nvidia/raw/h100-pcie-x2-full.json')
case('nvidia.nvml_init','fail','fail','LIB_RM_VERSION_MISMATCH', H2, nvml_shared='nvidia/raw/init-lib-rm-mismatch.json')
# 3 version_match
case('nvidia.version_match','pass','pass','pass', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565,'/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.565.57.01':''}, links={'/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1':'libnvidia-ml.so.565.57.01'})
case('nvidia.version_match','fail','fail','mismatch', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565,'/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.86.15':''}, links={'/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1':'libnvidia-ml.so.570.86.15'})
# 4 device_nodes
nodes={'/dev/nvidiactl':'','/dev/nvidia0':'','/dev/nvidia-uvm':'','/dev/nvidia-uvm-tools':''}
case('nvidia.device_nodes','pass','pass','pass', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565}|nodes, chmod={p:'0666' for p in nodes}, uid=1000, groups=['users'])
n2=dict(nodes); del n2['/dev/nvidia-uvm']; del n2['/dev/nvidia-uvm-tools']
case('nvidia.device_nodes','fail','fail','missing_uvm', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565}|n2, chmod={p:'0666' for p in n2}, uid=1000, groups=['users'])
case('nvidia.device_nodes','fail-access','fail','no_access', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565}|nodes, chmod={'/dev/nvidiactl':'0660','/dev/nvidia0':'0660','/dev/nvidia-uvm':'0666','/dev/nvidia-uvm-tools':'0666'}, uid=1000, groups=['users'])
# 5 container
case('container.gpu_access','pass','pass','pass_nodes', nvpci('0000:07:00.0')|{'/.dockerenv':'','/dev/nvidiactl':'','/dev/nvidia0':''}, env={'NVIDIA_VISIBLE_DEVICES':'all'})
case('container.gpu_access','fail','fail','not_passed', {'/.dockerenv':''}, env={'NVIDIA_VISIBLE_DEVICES':'all'})
case('container.gpu_access','fail-lost','fail','lost', nvpci('0000:07:00.0')|{'/.dockerenv':'','/dev/nvidiactl':'','/dev/nvidia0':''}, env={'NVIDIA_VISIBLE_DEVICES':'all'}, nvml_obj={'version':1,'source':'nvml','init_ret':999,'gpus':[]})
# 6 framework runtime
def torchpy(ver,cuda):
    c = f"'{cuda}'" if cuda else 'None'
    return f"from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n__version__ = '{ver}'\ndebug = False\ncuda: Optional[str] = {c}\ngit_version = 'a8d6afb511a69687bbb2b7e88a3cf67917e1697e'\nhip: Optional[str] = None\n"
SP='/home/u/venv/lib/python3.11/site-packages'
case('cuda.framework_runtime','pass','pass','pass', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC565, SP+'/torch/version.py':torchpy('2.5.1+cu124','12.4'), SP+'/nvidia_cuda_runtime_cu12-12.4.127.dist-info/METADATA':'Name: nvidia-cuda-runtime-cu12\nVersion: 12.4.127\n'}, env={'VIRTUAL_ENV':'/home/u/venv'})
case('cuda.framework_runtime','fail','fail','major', nvpci('0000:07:00.0')|{'/proc/driver/nvidia/version':PROC525, SP+'/torch/version.py':torchpy('2.9.0+cu130','13.0')}, env={'VIRTUAL_ENV':'/home/u/venv'})
# 7 visible devices
case('env.visible_devices','pass','pass','pass', H2, env={'CUDA_VISIBLE_DEVICES':'0,1','CUDA_DEVICE_ORDER':'PCI_BUS_ID'})
case('env.visible_devices','fail','fail','out_of_range', H2, env={'CUDA_VISIBLE_DEVICES':'0,3'})
# 8 persistence
h=healthy(); case('nvidia.persistence_mode','pass','pass','pass', H2, nvml_obj=h)
h=healthy()
for g in h['gpus']: g['persistence_mode']={'value':0,'ret':0}
case('nvidia.persistence_mode','fail','warn','off', H2, nvml_obj=h)
# 9 fabric
case('nvidia.fabric_manager','pass','pass','pass_process', nvpci('0000:18:00.0','2330')|nvpci('0000:05:00.0','22A3','68000',drv='')|{'/proc/2210/comm':'nv-fabricmanager\n','/proc/1/comm':'systemd\n'})
case('nvidia.fabric_manager','fail','fail','no_process', nvpci('0000:18:00.0','2330')|nvpci('0000:05:00.0','22A3','68000',drv='')|{'/proc/1/comm':'systemd\n'})
# 10 pcie
case('pcie.link_width','pass','pass','pass', nvpci('0000:17:00.0','2331',width=(16,16)))
case('pcie.link_width','fail','warn','narrow', nvpci('0000:17:00.0','2331',width=(8,16)))
# 11 throttle
case('nvidia.throttle','pass','pass','pass', H2, nvml_obj=healthy())
h=healthy(); h['gpus'][1]['clocks_event_reasons']={'value':0x40,'ret':0}
case('nvidia.throttle','fail','fail','hw', H2, nvml_obj=h)
# 12 ecc
case('nvidia.ecc','pass','pass','pass', H2, nvml_obj=healthy())
h=healthy(); h['gpus'][0]['remapped_rows']={'value':{'correctable':0,'uncorrectable':9,'pending':False,'failure':True},'ret':0}
case('nvidia.ecc','fail','fail','remap_failure', H2, nvml_obj=h)
case('nvidia.ecc','warn-pending','warn','pending', H2, nvml_shared='nvidia/raw/h100-pcie-x2-full.json')
# 13 mig
case('nvidia.mig_pending','pass','pass','pass', H2, nvml_obj=healthy())
case('nvidia.mig_pending','fail','warn','pending', H2, nvml_shared='nvidia/raw/h100-pcie-x2-full.json')
# 14 memory in use
case('gpu.memory_in_use','pass','pass','pass', H2, nvml_obj=healthy())
h=healthy(); h['gpus'][0]['processes']={'value':[{'pid':4242,'used_memory_bytes':30*2**30},{'pid':4243,'used_memory_bytes':2**30}],'ret':0}
case('gpu.memory_in_use','fail','warn','busy', H2, nvml_obj=h)
# 15 shm
MEM=rd('hosts/ci-vm-amd64/proc/meminfo')
case('host.shm_size','pass','pass','pass', {'/proc/meminfo':MEM,'/proc/self/mountinfo':rd('hosts/ci-vm-amd64/proc/self/mountinfo')})
case('host.shm_size','fail','fail','tiny', {'/proc/meminfo':MEM,'/proc/self/mountinfo':rd('hosts/synthetic-docker-shm/proc/self/mountinfo')})
case('host.shm_size','warn-mounts','warn','small', {'/proc/meminfo':MEM,'/proc/mounts':'proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\nshm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=524288k 0 0\n'})
# 16 cgroup
case('host.cgroup_limits','pass','pass','pass', {'/proc/meminfo':MEM,'/proc/cpuinfo':rd('hosts/ci-vm-amd64/proc/cpuinfo'),'/proc/self/cgroup':'0::/\n','/sys/fs/cgroup/cgroup.controllers':'cpuset cpu io memory pids\n','/sys/fs/cgroup/memory.max':'max\n','/sys/fs/cgroup/cpu.max':'max 100000\n'})
src=T+'/hosts/synthetic-cgroup2-nested'
files={}
for dp,dn,fn in os.walk(src):
    for f in fn:
        p=os.path.join(dp,f); files['/'+os.path.relpath(p,src)]=open(p).read()
case('host.cgroup_limits','fail','warn','limited', files)
# 17 p2p
case('multi_gpu.p2p_iommu','pass','pass','pass', H2|{'/proc/cmdline':'BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=0b5e ro intel_iommu=on iommu=pt quiet splash\n','/sys/kernel/iommu_groups/0/type':'DMA\n','/sys/kernel/iommu_groups/1/type':'DMA\n'})
case('multi_gpu.p2p_iommu','fail','warn','translated', H2|{'/proc/cmdline':'BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=0b5e ro intel_iommu=on quiet splash\n','/sys/kernel/iommu_groups/0/type':'DMA\n','/sys/kernel/iommu_groups/1/type':'DMA\n'})
# 18 rocm
kfdsrc=T+'/accel/rocm-mi210/sys/class/kfd/kfd/topology/nodes'
kf={}
for dp,dn,fn in os.walk(kfdsrc):
    for f in fn:
        p=os.path.join(dp,f); kf['/sys/class/kfd/kfd/topology/nodes/'+os.path.relpath(p,kfdsrc)]=open(p).read()
case('rocm.kfd_access','pass','pass','pass', kf|{'/dev/kfd':'','/dev/dri/renderD128':''}, chmod={'/dev/kfd':'0660','/dev/dri/renderD128':'0660'}, uid=1000, groups=['users','render','video'])
case('rocm.kfd_access','fail','fail','no_access', kf|{'/dev/kfd':'','/dev/dri/renderD128':''}, chmod={'/dev/kfd':'0660','/dev/dri/renderD128':'0660'}, uid=1000, groups=['users'])
# 19 tpu in use
def tpupci(dev='0063'):
    return {f'/sys/bus/pci/devices/0000:00:04.0/uevent':f'DRIVER=vfio-pci\nPCI_CLASS=120000\nPCI_ID=1AE0:{dev}\nPCI_SUBSYS_ID=1AE0:0000\nPCI_SLOT_NAME=0000:00:04.0\n'}
case('tpu.in_use','pass','pass','pass', tpupci()|{'/dev/vfio/0':'','/dev/vfio/vfio':'','/proc/120/comm':'bash\n'}, links={'/proc/120/fd/0':'/dev/pts/0'})
case('tpu.in_use','fail','fail','busy', tpupci()|{'/dev/vfio/0':'','/dev/vfio/vfio':'','/proc/4242/comm':'python3\n'}, links={'/proc/4242/fd/0':'/dev/null','/proc/4242/fd/17':'/dev/vfio/0'})
# 20 hugepages
case('tpu.hugepages','pass','pass','pass', tpupci()|{'/sys/kernel/mm/transparent_hugepage/enabled':'[always] madvise never\n'})
case('tpu.hugepages','fail','warn','off', tpupci()|{'/sys/kernel/mm/transparent_hugepage/enabled':'always [madvise] never\n'})
# 21 tpu env
case('tpu.env_bounds','pass','pass','pass', tpupci(), env={'TPU_CHIPS_PER_PROCESS_BOUNDS':'1,1,1','TPU_PROCESS_BOUNDS':'1,1,1','TPU_VISIBLE_CHIPS':'0'})
case('tpu.env_bounds','fail','warn','addresses', tpupci(), env={'TPU_PROCESS_ADDRESSES':'local:8476,local:8477,local:8478,local:8479','TPU_PROCESS_PORT':'8476'})
# 22 rosetta
case('apple.rosetta','pass','pass','pass', {}, os='darwin', arch='arm64', sysctl_shared='accel/mac/sysctl-m4-macos15.txt')
case('apple.rosetta','fail','fail','translated', {}, os='darwin', arch='amd64', sysctl_shared='accel/mac/sysctl-m1-rosetta-macos13.txt')
# 23 macos version
case('apple.macos_version','pass','pass','pass', {}, os='darwin', arch='arm64', sysctl_shared='accel/mac/sysctl-m4-macos15.txt')
case('apple.macos_version','fail','warn','no_bf16', {}, os='darwin', arch='amd64', sysctl_shared='accel/mac/sysctl-m1-rosetta-macos13.txt')
case('apple.macos_version','fail-plist','fail','no_mps', {'/System/Library/CoreServices/SystemVersion.plist':'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n\t<key>ProductBuildVersion</key>\n\t<string>21C52</string>\n\t<key>ProductCopyright</key>\n\t<string>1983-2021 Apple Inc.</string>\n\t<key>ProductName</key>\n\t<string>macOS</string>\n\t<key>ProductUserVisibleVersion</key>\n\t<string>12.1</string>\n\t<key>ProductVersion</key>\n\t<string>12.1</string>\n</dict>\n</plist>\n'}, os='darwin', arch='arm64')
# 24 watermark
case('apple.mps_watermark','pass','pass','pass', {}, os='darwin', arch='arm64', env={'PYTORCH_MPS_HIGH_WATERMARK_RATIO':'1.0','PYTORCH_MPS_LOW_WATERMARK_RATIO':'0.8'})
case('apple.mps_watermark','fail','fail','below_low', {}, os='darwin', arch='arm64', env={'PYTORCH_MPS_HIGH_WATERMARK_RATIO':'1.0'})
case('apple.mps_watermark','warn-zero','warn','zero', {}, os='darwin', arch='arm64', env={'PYTORCH_MPS_HIGH_WATERMARK_RATIO':'0.0'})
# 25 wsl
case('platform.wsl2','pass','pass','pass', {'/dev/dxg':'','/usr/lib/wsl/lib/libnvidia-ml.so.1':'','/usr/lib/wsl/lib/libcuda.so.1':''})
case('platform.wsl2','fail','fail','linux_driver', {'/dev/dxg':'','/usr/lib/wsl/lib/libnvidia-ml.so.1':'','/proc/driver/nvidia/version':PROC565})
# 26 jetson
TEGRA='# R35 (release), REVISION: 3.1, GCID: 32827747, BOARD: t186ref, EABI: aarch64, DATE: Sun Mar 19 15:19:21 UTC 2023\n'
SPJ='/home/u/venv/lib/python3.8/site-packages'
case('platform.jetson','pass','pass','pass', {'/etc/nv_tegra_release':TEGRA,'/proc/driver/nvidia/version':rd('nvidia/proc/open-aarch64-jetson-35.3.1.txt')}, arch='arm64')
case('platform.jetson','fail','warn','cpu_torch', {'/etc/nv_tegra_release':TEGRA, SPJ+'/torch/version.py':torchpy('2.1.0',None)}, arch='arm64', env={'VIRTUAL_ENV':'/home/u/venv'})
# 27 avx2
case('cpu.avx2','pass','pass','pass', {'/proc/cpuinfo':rd('hosts/x86-sapphire-rapids/proc/cpuinfo')}, arch='amd64')
old=rd('hosts/x86-sapphire-rapids/proc/cpuinfo')
import re
old=re.sub(r'(^flags\s*:.*$)', lambda m: ' '.join(t for t in m.group(1).split(' ') if not t.startswith('avx2') and not t.startswith('avx512') and t not in ('avx_vnni','amx_tile','amx_int8','amx_bf16','amx_fp16','avx_vnni_int8')), old, flags=re.M)
case('cpu.avx2','fail','warn','no_avx2', {'/proc/cpuinfo':old}, arch='amd64')
# 28-30 env
case('env.devctl','pass','pass','pass', {}, env={'DEVCTL_DEVICE':'cuda:0','DEVCTL_MEMORY_FRACTION':'0.8','DEVCTL_MEMORY_STRATEGY':'custom'})
case('env.devctl','fail','fail','bad_env', {}, env={'DEVCTL_MEMORY_FRACTION':'1.5'})
case('env.xla','pass','pass','pass', {}, env={'XLA_PYTHON_CLIENT_MEM_FRACTION':'.75','XLA_PYTHON_CLIENT_PREALLOCATE':'false','XLA_FLAGS':'--xla_force_host_platform_device_count=8'})
case('env.xla','fail','fail','bad', {}, env={'XLA_PYTHON_CLIENT_MEM_FRACTION':'75'})
case('env.pytorch','pass','pass','pass', {}, env={'PYTORCH_CUDA_ALLOC_CONF':'expandable_segments:True,max_split_size_mb:512,roundup_power2_divisions:[256:1,512:2,>:8]'})
case('env.pytorch','fail','fail','bad', {}, env={'PYTORCH_CUDA_ALLOC_CONF':'expandable_segments=True'})
