package explain

import "github.com/devctl/devctl/internal/explain/i18n"

// messagesPL are the Polish explanations; every id in messagesEN has one
// (a test enforces it), commands and settings stay untranslated.
var messagesPL = []i18n.Message{
	{ID: "out_of_memory", Title: "Brak pamięci GPU",
		Explanation: "Program poprosił GPU o więcej pamięci, niż było wolne[[ (żądano {requested}, wolne {free} z {total}[[ na GPU {device_index}]])]]. " +
			"Wagi modelu, aktywacje, gradienty i stan optymalizatora mieszczą się w pamięci urządzenia; rozmiar batcha i długość sekwencji zwiększają aktywacje. " +
			"Gdy zarezerwowano dużo więcej, niż przydzielono[[ (zarezerwowane {reserved}, przydzielone {allocated})]], problemem jest fragmentacja, a nie rozmiar.",
		Fixes: []string{
			"Zmniejsz batch o połowę (efektywny batch zachowaj akumulacją gradientów).",
			"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # ogranicza fragmentację",
			"Użyj mieszanej precyzji bf16/fp16, gradient checkpointingu lub wag 8-/4-bitowych (bitsandbytes) dla dużych modeli.",
			"Sprawdź inne procesy zajmujące GPU: nvidia-smi --query-compute-apps=pid,used_memory --format=csv",
			"devctl recommend --model-params <N>   # znajdzie plan, który zmieści się na tym GPU",
		}},
	{ID: "out_of_memory.rocm", Title: "Brak pamięci na GPU AMD (HIP)",
		Explanation: "Program poprosił GPU AMD o więcej pamięci, niż było wolne[[ (żądano {requested}, wolne {free} z {total})]]. " +
			"Wersje PyTorch dla ROCm używają tego samego alokatora co wersje CUDA, więc pomagają te same środki; na APU dostępna pula to część RAM-u przydzielona GPU.",
		Fixes: []string{
			"Zmniejsz batch o połowę (efektywny batch zachowaj akumulacją gradientów).",
			"export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True",
			"Użyj bf16/fp16, gradient checkpointingu lub mniejszych wag.",
			"Na APU (np. Strix Halo) zwiększ pamięć dla GPU w firmware lub parametrem jądra amdgpu.gttsize.",
		}},
	{ID: "out_of_memory.mps", Title: "Brak pamięci GPU Apple (MPS)",
		Explanation: "Alokator MPS w PyTorch odmówił przydziału, bo przekroczyłby limit[[ ({allocated} przez PyTorch oraz {other} innych alokacji, limit {total})]]. " +
			"Na Apple silicon GPU dzieli RAM z resztą systemu, więc inne aplikacje i sam macOS zużywają ten sam budżet.",
		Fixes: []string{
			"Zmniejsz o połowę batch albo rozmiar obrazu/sekwencji.",
			"Zamknij inne pamięciożerne aplikacje lub wywołuj torch.mps.empty_cache() między krokami.",
			"Tam, gdzie model na to pozwala, użyj wag float16.",
			"PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 znosi limit, ale może doprowadzić macOS do swapowania lub zawieszenia; lepiej ustaw np. 1.0 i przetestuj.",
		}},
	{ID: "out_of_memory.tensorflow", Title: "TensorFlow: brak pamięci urządzenia",
		Explanation: "Alokator TensorFlow nie zmieścił tensora[[ (w użyciu {allocated} z limitu {total})]]. Domyślnie TensorFlow rezerwuje na starcie prawie całą pamięć GPU, co ukrywa też, ile model naprawdę potrzebuje.",
		Fixes: []string{
			"Zmniejsz batch.",
			"export TF_FORCE_GPU_ALLOW_GROWTH=true   # przydział na żądanie",
			"Użyj mieszanej precyzji: tf.keras.mixed_precision.set_global_policy('mixed_float16').",
		}},
	{ID: "out_of_memory.cpu", Title: "Brak pamięci RAM",
		Explanation: "Alokator CPU nie dostał pamięci od systemu[[ (żądano {requested})]]. Model lub batch nie mieści się w RAM-ie (albo w limicie pamięci kontenera).",
		Fixes: []string{
			"Zmniejsz batch lub wczytaj model w niższej precyzji (torch_dtype=torch.bfloat16).",
			"Wczytuj wagi leniwie: low_cpu_mem_usage=True / device_map=\"auto\" (transformers, accelerate).",
			"devctl doctor --check cgroup   # limit kontenera może być niższy niż RAM maszyny",
		}},
	{ID: "out_of_memory.kv_cache", Title: "Za mało pamięci GPU na pamięć podręczną KV",
		Explanation: "Serwer inferencji wczytał wagi, ale zostało za mało pamięci na pamięć podręczną kluczy/wartości, której wymaga ustawiona długość kontekstu.",
		Fixes: []string{
			"Zmniejsz --max-model-len (długość kontekstu) lub --max-num-seqs.",
			"Zwiększ --gpu-memory-utilization (np. 0.95), jeśli nic innego nie używa GPU.",
			"Użyj modelu skwantyzowanego lub równoległości tensorowej na więcej GPU.",
		}},
	{ID: "xla_resource_exhausted", Title: "XLA: brak pamięci urządzenia",
		Explanation: "XLA (JAX, TensorFlow/XLA lub PyTorch/XLA) nie zmieściło buforów skompilowanego programu w pamięci urządzenia[[ (potrzeba {requested}[[, wolne {free}]][[ z {total}]])]]. " +
			"XLA planuje pamięć dla całego skompilowanego kroku, więc batch, który „prawie” się mieści, zawodzi przy kompilacji lub pierwszym wykonaniu.",
		Fixes: []string{
			"Zmniejsz batch na urządzenie lub długość sekwencji.",
			"JAX na GPU: XLA_PYTHON_CLIENT_PREALLOCATE=false lub XLA_PYTHON_CLIENT_MEM_FRACTION=.90, gdy GPU dzieli inny proces.",
			"Podziel model (pjit/FSDP), użyj rematerializacji (jax.checkpoint) lub parametrów bf16.",
		}},
	{ID: "device_mismatch", Title: "Tensory na różnych urządzeniach",
		Explanation: "Operacja dostała tensory z różnych urządzeń[[ ({devices})]]. Zwykle model przeniesiono na GPU, ale wejście, etykieta albo tensor tworzony w forward() został na CPU (lub odwrotnie).",
		Fixes: []string{
			"Przenoś wejścia i etykiety razem z modelem: x = x.to(device); y = y.to(device).",
			"Twórz nowe tensory na właściwym urządzeniu: torch.zeros(..., device=x.device).",
			"Przy device_map=\"auto\" lub kilku GPU przenoś wejścia na model.device (urządzenie pierwszej warstwy).",
		}},
	{ID: "dtype_mismatch", Title: "Tensory o różnej precyzji",
		Explanation: "Operacja dostała tensory o różnych typach danych[[ ({dtype})]], typowo wagi w połowicznej precyzji z wejściem float32 lub odwrotnie po zmieszaniu .half() z autocast.",
		Fixes: []string{
			"Rzutuj wejścia na typ modelu: x = x.to(next(model.parameters()).dtype).",
			"Zamiast ręcznego .half() użyj torch.autocast(device_type=\"cuda\", dtype=torch.float16).",
			"Wczytaj model w jednym typie (torch_dtype=torch.float32 na CPU, bfloat16/float16 na GPU).",
		}},
	{ID: "unsupported_dtype", Title: "Ta precyzja nie jest tu obsługiwana",
		Explanation: "Urządzenie lub operacja nie ma jądra dla tej precyzji[[ ({operator} z {dtype})]].",
		Fixes: []string{
			"Na tym urządzeniu użyj float32 lub precyzji, którą urządzenie obsługuje.",
			"devctl probe   # pokazuje supports_fp16 / supports_bf16 dla każdego urządzenia",
		}},
	{ID: "unsupported_dtype.cpu_half", Title: "Połowiczna precyzja na CPU",
		Explanation: "Model działa na CPU we float16/bfloat16, a to jądro CPU[[ ({operator})]] nie ma wersji połowicznej precyzji. Zwykle oznacza to, że GPU w ogóle nie zostało użyte (torch bez CUDA albo niewidoczne GPU).",
		Fixes: []string{
			"Jeśli miało działać GPU: python -c 'import torch; print(torch.cuda.is_available())' i zainstaluj torch z CUDA.",
			"Na CPU wczytaj model we float32: model.float() lub torch_dtype=torch.float32.",
		}},
	{ID: "unsupported_dtype.mps_bf16", Title: "bfloat16 na MPS wymaga macOS 14",
		Explanation: "Model używa bfloat16, który backend MPS obsługuje dopiero od macOS 14 (Sonoma) z nowym PyTorch.",
		Fixes: []string{
			"Wczytaj model we float16: torch_dtype=torch.float16.",
			"Albo zaktualizuj do macOS 14+ i PyTorch 2.3+.",
		}},
	{ID: "unsupported_dtype.mps_float64", Title: "float64 nie jest obsługiwany na MPS",
		Explanation: "Metal Performance Shaders Apple nie mają typu float64, więc tensora float64 nie da się przenieść na MPS. Tablice NumPy są domyślnie float64.",
		Fixes: []string{
			"Konwertuj przed przeniesieniem: torch.from_numpy(a).float().to(\"mps\").",
			"Ustaw torch.set_default_dtype(torch.float32) i twórz tablice z dtype=np.float32.",
		}},
	{ID: "unsupported_dtype.bf16_cc", Title: "bfloat16 wymaga nowszego GPU",
		Explanation: "bfloat16 działa natywnie tylko na GPU o compute capability 8.0 (Ampere) lub nowszym; to GPU jest starsze.",
		Fixes: []string{
			"Użyj float16: --dtype=half (vLLM) lub torch_dtype=torch.float16.",
			"devctl probe   # pokazuje compute capability i supports_bf16",
		}},
	{ID: "mps_placeholder_storage", Title: "Tensor nie został przeniesiony na MPS",
		Explanation: "PyTorch trafił na operację MPS, której wejście wciąż jest na CPU („placeholder storage has not been allocated”). To niezgodność urządzeń specyficzna dla backendu Apple: model jest na mps, a wejście, indeks embeddingu lub bufor nie.",
		Fixes: []string{
			"Przenieś każde wejście na urządzenie modelu: inputs = {k: v.to(\"mps\") for k, v in inputs.items()}.",
			"Sprawdź tensory tworzone w forward() lub w collatorze danych: przekaż device=...",
			"PyTorch 2.4+ podaje nazwę winnego argumentu; zaktualizuj, aby ją zobaczyć.",
		}},
	{ID: "mps_unsupported_op", Title: "Operacja niezaimplementowana na MPS",
		Explanation: "Backend MPS nie ma jądra dla tej operacji[[ ({operator})]]. PyTorch może wykonać takie operacje na CPU, kosztem szybkości.",
		Fixes: []string{
			"export PYTORCH_ENABLE_MPS_FALLBACK=1   # ustaw przed startem Pythona, nie w skrypcie po import torch",
			"Zaktualizuj PyTorch: pokrycie MPS rośnie z każdym wydaniem.",
			"Albo uruchom na CPU: --device cpu.",
		}},
	{ID: "mps_unsupported_op.sparse", Title: "Tensory rzadkie nie działają na MPS",
		Explanation: "Model zawiera tensor rzadki (np. alignment heads w Whisperze), a backend MPS nie ma pamięci rzadkiej, więc przeniesienie modelu na mps się nie udaje[[ ({operator})]].",
		Fixes: []string{
			"Wczytaj model na CPU i przenoś tylko gęste części albo zostań na CPU: --device cpu.",
			"Dla Whispera na Apple silicon użyj natywnej wersji Metal (whisper.cpp, mlx-whisper).",
			"export PYTORCH_ENABLE_MPS_FALLBACK=1 pomaga przy brakujących operacjach, ale nie przy pamięci rzadkiej.",
		}},
	{ID: "cuda_driver_mismatch", Title: "Sterownik NVIDIA za stary dla tej wersji CUDA",
		Explanation: "Framework zbudowano dla nowszej CUDA, niż obsługuje zainstalowany sterownik[[ (sterownik obsługuje CUDA {driver_cuda_version}[[, sterownik {driver_version}]])]][[; program wymaga CUDA {runtime_version}]]. " +
			"Sterownik obsługuje każde wydanie CUDA do tego, z którym go wydano, nigdy nowsze.",
		Fixes: []string{
			"Zaktualizuj sterownik NVIDIA (np. sudo ubuntu-drivers install albo sterownik z nvidia.com).",
			"Albo zainstaluj wersję frameworka dla CUDA sterownika[[ ({driver_cuda_version})]]: pip install torch --index-url https://download.pytorch.org/whl/cu118",
			"devctl doctor   # porównuje CUDA sterownika z runtime znalezionym w aktywnym środowisku",
		}},
	{ID: "cuda_driver_mismatch.nvml", Title: "Moduł jądra NVIDIA i biblioteki się nie zgadzają",
		Explanation: "Załadowany moduł jądra NVIDIA ma inną wersję niż biblioteki sterownika w przestrzeni użytkownika[[ (biblioteka {driver_version})]], zwykle po aktualizacji sterownika (często przez unattended-upgrades) bez restartu.",
		Fixes: []string{
			"Uruchom maszynę ponownie (najprościej i najbezpieczniej).",
			"Albo, gdy żaden proces nie używa GPU: sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia",
			"Zablokuj cichą aktualizację sterownika: sudo apt-mark hold 'nvidia-*' (lub skonfiguruj unattended-upgrades).",
		}},
	{ID: "no_gpu_found", Title: "Brak używalnego GPU",
		Explanation: "Framework nie znalazł używalnego GPU: sterownik NVIDIA nie jest załadowany, brakuje węzłów urządzeń lub są ukryte (CUDA_VISIBLE_DEVICES, kontenery), albo maszyna nie ma obsługiwanego GPU.",
		Fixes: []string{
			"nvidia-smi   # musi pokazać GPU; jeśli zawodzi, zainstaluj lub załaduj sterownik",
			"Sprawdź, czy CUDA_VISIBLE_DEVICES nie jest puste ani błędne.",
			"W Dockerze: uruchamiaj z --gpus all (z zainstalowanym NVIDIA Container Toolkit).",
			"devctl doctor   # sprawdza sterownik, węzły urządzeń i dostęp z kontenera",
		}},
	{ID: "no_gpu_found.cpu_build", Title: "PyTorch zainstalowano bez CUDA",
		Explanation: "Zainstalowany torch to wersja tylko na CPU, więc nie użyje GPU, nawet jeśli jest w maszynie.",
		Fixes: []string{
			"pip uninstall torch && pip install torch --index-url https://download.pytorch.org/whl/cu121   # wybierz CUDA obsługiwaną przez sterownik",
			"python -c 'import torch; print(torch.__version__, torch.version.cuda)'   # '+cpu' lub None oznacza wersję CPU",
			"Na Macu używaj urządzenia \"mps\", nie \"cuda\".",
		}},
	{ID: "no_gpu_found.cuda_unknown", Title: "CUDA nie uruchomiła się (nieznany błąd)",
		Explanation: "Inicjalizacja CUDA skończyła się „unknown error” i PyTorch ustawił liczbę urządzeń na zero. Częste przyczyny: moduł nvidia_uvm nie jest załadowany lub zawiesił się po uśpieniu, brakuje /dev/nvidia-uvm, albo CUDA_VISIBLE_DEVICES zmieniono po starcie.",
		Fixes: []string{
			"sudo nvidia-modprobe -u -c=0   # tworzy /dev/nvidia-uvm i ładuje nvidia_uvm",
			"Po uśpieniu: sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm",
			"Ustawiaj CUDA_VISIBLE_DEVICES przed startem Pythona, nigdy po import torch.",
		}},
	{ID: "no_gpu_found.deserialize", Title: "Checkpoint zapisany na GPU, wczytywany bez GPU",
		Explanation: "Checkpoint zawiera tensory CUDA, a tutaj torch.cuda.is_available() zwraca False: maszyna nie ma używalnego GPU albo torch jest wersją na CPU.",
		Fixes: []string{
			"Wczytaj na CPU: torch.load(path, map_location=\"cpu\").",
			"Jeśli GPU powinno być dostępne: nvidia-smi, potem sprawdź, czy torch.version.cuda nie jest None.",
		}},
	{ID: "no_gpu_found.mps", Title: "MPS jest niedostępne",
		Explanation: "Backend MPS jest niedostępny: wymaga Apple silicon, macOS 12.3 lub nowszego oraz Pythona arm64 (nie przez Rosettę) z PyTorch zbudowanym z MPS.",
		Fixes: []string{
			"python -c 'import platform; print(platform.machine())'   # musi wypisać arm64",
			"Zaktualizuj macOS do 12.3+ (14+ dla bfloat16) i PyTorch.",
		}},
	{ID: "cuda_launch_failure", Title: "Jądro GPU zakończyło się błędem",
		Explanation: "Jądro CUDA zawiodło na urządzeniu. Przy device-side assert to prawie zawsze złe dane wejściowe: indeks poza zakresem, np. etykieta klasy ≥ liczby klas lub id tokenu ≥ rozmiaru słownika. CUDA zgłasza błędy asynchronicznie, więc wskazana linia Pythona może nie być winna.",
		Fixes: []string{
			"CUDA_LAUNCH_BLOCKING=1 python train.py   # traceback wskaże właściwą operację",
			"Uruchom jeden batch na CPU: ten sam błąd da tam czytelny IndexError.",
			"Sprawdź, czy etykiety są w [0, num_classes), a id tokenów < rozmiar słownika (po dodaniu tokenów specjalnych zmień rozmiar embeddingów).",
		}},
	{ID: "cuda_launch_failure.illegal_access", Title: "Niedozwolony dostęp do pamięci na GPU",
		Explanation: "Jądro czytało lub pisało poza swoją pamięcią. Przyczyny: błąd we własnym rozszerzeniu CUDA lub w jądrze biblioteki, indeksy poza zakresem albo (rzadko) uszkodzony sprzęt. Po tym błędzie kontekst CUDA jest bezużyteczny aż do restartu procesu.",
		Fixes: []string{
			"CUDA_LAUNCH_BLOCKING=1 python train.py   # znajdź operację",
			"compute-sanitizer python train.py   # wskaże błędny dostęp (wolno)",
			"Zaktualizuj lub przebuduj własne rozszerzenia dla tej wersji torch/CUDA; jeśli błąd jest losowy, sprawdź dmesg pod kątem błędów Xid.",
		}},
	{ID: "cudnn_error", Title: "Błąd cuDNN",
		Explanation: "Wywołanie cuDNN zawiodło[[ (kod {error_code})]]. NOT_INITIALIZED i EXECUTION_FAILED zwykle znaczą, że cuDNN nie dostał pamięci albo nie pasuje do używanej CUDA/sterownika; często ukrywają brak pamięci.",
		Fixes: []string{
			"Najpierw zmniejsz batch: błędy cuDNN to często przebrany brak pamięci.",
			"Używaj cuDNN dostarczonego z frameworkiem (koła pip go zawierają) i usuń starsze kopie z LD_LIBRARY_PATH.",
			"Dla izolacji: torch.backends.cudnn.enabled = False (wolniej) i sprawdź, czy błąd znika.",
		}},
	{ID: "cudnn_error.load", Title: "Nie znaleziono biblioteki cuDNN",
		Explanation: "Framework nie mógł wczytać potrzebnej biblioteki cuDNN.",
		Fixes: []string{
			"pip install nvidia-cudnn-cu12 (lub wersję wskazaną przez framework) albo użyj koła frameworka z CUDA, które ją zawiera.",
			"Sprawdź, czy LD_LIBRARY_PATH nie wskazuje starszej CUDA/cuDNN.",
		}},
	{ID: "cudnn_error.version", Title: "Wersja cuDNN nie pasuje do kompilacji",
		Explanation: "cuDNN znaleziony w czasie działania jest starszy niż ten, z którym zbudowano framework.",
		Fixes: []string{
			"Zainstaluj wersję cuDNN, którą podaje framework (pip install -U nvidia-cudnn-cu12).",
			"Usuń inne kopie cuDNN z LD_LIBRARY_PATH / środowisk conda.",
		}},
	{ID: "nccl_error", Title: "Błąd NCCL (komunikacja między GPU)",
		Explanation: "NCCL, który przesyła tensory między GPU i węzłami, zawiódł[[ (błąd {error_code})]]. „Unhandled system error” to zwykle środowisko: za mało pamięci współdzielonej w kontenerze, zły interfejs sieciowy albo problemy z InfiniBand/peer-to-peer.",
		Fixes: []string{
			"NCCL_DEBUG=INFO torchrun ...   # linie WARN podają prawdziwą przyczynę",
			"W Dockerze: --ipc=host lub --shm-size=16g.",
			"Wskaż właściwy interfejs: NCCL_SOCKET_IFNAME=eth0 (i NCCL_IB_DISABLE=1, jeśli nie ma InfiniBand).",
			"Jeśli P2P się zawiesza na maszynach PCIe: NCCL_P2P_DISABLE=1 (wolniej), potem popraw ustawienia ACS/IOMMU.",
		}},
	{ID: "nccl_error.timeout", Title: "Przekroczono czas operacji zbiorowej",
		Explanation: "Jeden z procesów (rank) czekał na pozostałe dłużej, niż pozwala limit, w operacji zbiorowej (all-reduce, all-gather...). Któryś rank jest wolniejszy, zawiesił się, padł albo poszedł inną ścieżką kodu (nierówne dane, gałąź tylko dla jednego ranku, ewaluacja na ranku 0).",
		Fixes: []string{
			"Szukaj pierwszego błędu na dowolnym ranku: timeout to zwykle objaw.",
			"Niech każdy rank wykonuje te same operacje zbiorowe (ta sama liczba batchy; drop_last=True).",
			"Długa praca tylko na ranku 0 (zapis, ewaluacja): zwiększ limit, np. init_process_group(timeout=timedelta(hours=1)).",
			"NCCL_DEBUG=INFO TORCH_NCCL_TRACE_BUFFER_SIZE=1000, aby zobaczyć, która operacja utknęła.",
		}},
	{ID: "xla_tpu_init", Title: "TPU nie uruchomiło się",
		Explanation: "Środowisko uruchomieniowe TPU (libtpu) nie wystartowało. Na wielohostowych slice'ach program musi działać na każdym hoście; na pojedynczym hoście chipy mogą blokować zbędne ustawienia lub poprzedni proces.",
		Fixes: []string{
			"Uruchom program na wszystkich hostach slice'a (gcloud ... ssh --worker=all --command=...).",
			"Na pojedynczym hoście usuń zbędne zmienne topologii: unset TPU_PROCESS_ADDRESSES TPU_CHIPS_PER_HOST_BOUNDS TPU_HOST_BOUNDS",
			"Jeśli błąd nie mija, zrestartuj maszynę TPU VM.",
		}},
	{ID: "xla_tpu_init.busy", Title: "TPU jest zajęte przez inny proces",
		Explanation: "Inny proces (lub pozostały plik blokady) trzyma chipy TPU; może ich używać tylko jeden proces.",
		Fixes: []string{
			"sudo lsof -w /dev/accel* /dev/vfio/*   # znajdź proces i go zakończ",
			"rm -f /tmp/libtpu_lockfile   # tylko gdy nie działa żaden proces TPU",
			"W notatnikach zrestartuj kernel, który używał TPU, zanim uruchomisz kolejny.",
		}},
	{ID: "xla_tpu_init.multihost", Title: "Inicjalizacja TPU czeka na inne hosty",
		Explanation: "Na wielohostowym slice'u TPU JAX czeka, aż program wystartuje na każdym hoście; jeśli działa tylko na jednym, inicjalizacja się zawiesza.",
		Fixes: []string{
			"Uruchom program na wszystkich workerach: gcloud compute tpus tpu-vm ssh NAZWA --worker=all --command=\"python3 train.py\"",
		}},
	{ID: "rocm_hip_error", Title: "Błąd ROCm / HIP",
		Explanation: "Środowisko GPU AMD zgłosiło błąd. Najczęstsza przyczyna na kartach konsumenckich: architektura GPU (gfx) spoza listy obsługiwanej przez daną wersję ROCm.",
		Fixes: []string{
			"rocminfo | grep gfx   # architektura GPU",
			"Zainstaluj PyTorch dla ROCm obsługujący ją albo (nieoficjalnie, na własne ryzyko) HSA_OVERRIDE_GFX_VERSION=10.3.0 dla RDNA2 / 11.0.0 dla RDNA3.",
		}},
	{ID: "rocm_hip_error.no_binary", Title: "Brak kodu GPU dla tej karty AMD",
		Explanation: "Biblioteki ROCm nie zawierają skompilowanych jąder dla architektury tego GPU (gfx), więc nic nie może na nim działać.",
		Fixes: []string{
			"rocminfo | grep gfx   # np. gfx1031",
			"HSA_OVERRIDE_GFX_VERSION=10.3.0 (RDNA2) lub 11.0.0 (RDNA3) każe ROCm użyć bliskiej obsługiwanej architektury: działa na wielu kartach konsumenckich, AMD tego nie wspiera.",
			"Albo użyj wydania ROCm/PyTorch, które wymienia to GPU.",
		}},
	{ID: "rocm_hip_error.kfd", Title: "Brak dostępu do /dev/kfd",
		Explanation: "Środowisko ROCm nie może otworzyć /dev/kfd: użytkownik nie należy do grup będących właścicielami węzłów GPU (render i video) albo sterownik jądra nie obsługuje tego GPU.",
		Fixes: []string{
			"sudo usermod -aG render,video $USER   # potem wyloguj się i zaloguj ponownie",
			"ls -l /dev/kfd /dev/dri/renderD*   # sprawdź grupę właściciela",
			"dmesg | grep kfd   # „not supported in kfd” oznacza GPU za stare dla ROCm",
		}},
	{ID: "other", Title: "Błąd GPU",
		Explanation: "Log pokazuje błąd urządzenia rodzaju, którego devctl nie klasyfikuje dokładniej[[ (kod {error_code})]].",
		Fixes: []string{
			"CUDA_LAUNCH_BLOCKING=1, aby dostać dokładny traceback.",
			"devctl doctor   # sprawdza sterownik, urządzenia i środowisko",
		}},
	{ID: "other.fabric_manager", Title: "Sieć NVSwitch niegotowa (błąd CUDA 802)",
		Explanation: "CUDA zgłasza „system not yet initialized”: na maszynach z NVSwitch (HGX/DGX A100, H100, H200, B200) usługa NVIDIA Fabric Manager musi działać, w tej samej wersji co sterownik, zanim CUDA wystartuje.",
		Fixes: []string{
			"sudo systemctl enable --now nvidia-fabricmanager",
			"Zainstaluj fabric manager zgodny ze sterownikiem[[ ({driver_version})]]: sudo apt install nvidia-fabricmanager-<gałąź sterownika>",
			"nvidia-smi -q | grep -A2 Fabric   # stan musi być Completed",
		}},
	{ID: "other.no_kernel_image", Title: "Brak kodu GPU dla tej architektury",
		Explanation: "Binaria CUDA (koło frameworka lub własne rozszerzenie) nie zostały skompilowane dla compute capability tego GPU: GPU za stare dla tej wersji albo za nowe dla starej.",
		Fixes: []string{
			"python -c 'import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())'",
			"Zainstaluj wersję, której lista architektur obejmuje to GPU (nowszy torch dla nowych GPU, starszy dla Kepler/Maxwell).",
			"Przebuduj własne rozszerzenia z TORCH_CUDA_ARCH_LIST ustawionym na capability GPU (np. \"8.6\").",
		}},
	{ID: "other.cublas", Title: "Błąd cuBLAS",
		Explanation: "Operacja macierzowa cuBLAS zawiodła. Częste przyczyny: brak pamięci na obszar roboczy, CUDA za stara dla tego GPU (np. CUDA 10 na RTX 30xx) albo wcześniejszy błąd asynchroniczny.",
		Fixes: []string{
			"Zmniejsz batch.",
			"Użyj wersji frameworka z CUDA obsługującą to GPU.",
			"CUDA_LAUNCH_BLOCKING=1, aby sprawdzić, czy wcześniej nie zawiodło inne jądro.",
		}},
	{ID: "other.shm", Title: "Brak pamięci współdzielonej (/dev/shm)",
		Explanation: "Procesy DataLoadera przekazują batche przez pamięć współdzieloną; /dev/shm się zapełnił i worker został zabity (Bus error). Docker domyślnie daje kontenerom tylko 64 MiB.",
		Fixes: []string{
			"docker run --shm-size=16g ... (albo --ipc=host)",
			"Zmniejsz num_workers w DataLoaderze lub ustaw num_workers=0, aby to potwierdzić.",
			"df -h /dev/shm   # sprawdź rozmiar",
		}},
	{ID: "other.bitsandbytes", Title: "bitsandbytes nie wczytał biblioteki CUDA",
		Explanation: "bitsandbytes nie znalazł binarki CUDA pasującej do zainstalowanego runtime CUDA i przełączył się na bibliotekę CPU (lub nie zdołał jej wczytać).",
		Fixes: []string{
			"pip install -U bitsandbytes   # nowe koła zawierają wszystkie wersje CUDA",
			"python -m bitsandbytes   # pokazuje, co znalazł",
			"Jeśli ustawiono BNB_CUDA_VERSION, usuń ją albo dodaj do LD_LIBRARY_PATH libcudart tej wersji CUDA.",
		}},
	{ID: "other.nvml_unknown", Title: "Utracony dostęp do GPU (NVML: Unknown Error)",
		Explanation: "NVML zwrócił „Unknown Error”. W kontenerach zwykle znaczy to, że kontener stracił dostęp do węzłów GPU po przeładowaniu systemd na hoście (systemctl daemon-reload).",
		Fixes: []string{
			"Uruchom kontener ponownie.",
			"Administrator hosta: sudo nvidia-ctk system create-dev-char-symlinks --create-all albo specyfikacje urządzeń CDI.",
		}},
	{ID: "other.mps_assert", Title: "Asercja frameworka Metal (MPS)",
		Explanation: "Metal Performance Shaders Apple przerwały proces wewnętrzną asercją. To błąd lub ograniczenie jąder MPS w tym połączeniu PyTorch/macOS (często kształt lub rozmiar tensora, którego MPS nie obsługuje), a nie błąd w twoim kodzie.",
		Fixes: []string{
			"Zaktualizuj PyTorch (i macOS): wiele asercji MPS poprawiono w późniejszych wydaniach.",
			"Uruchom problematyczny krok na CPU (--device cpu); PYTORCH_ENABLE_MPS_FALLBACK=1 nie przechwytuje asercji.",
			"Zgłoś to w pytorch/pytorch z kształtami tensorów i treścią asercji.",
		}},
	{ID: "other.gpu_lost", Title: "GPU odpadło z magistrali",
		Explanation: "Sterownik stracił kontakt z GPU (Xid 79 / „GPU is lost”): przegrzanie, zasilanie, zły riser lub gniazdo PCIe albo uszkodzony sprzęt.",
		Fixes: []string{
			"sudo dmesg | grep -i xid   # zapisz kody Xid",
			"Uruchom ponownie; jeśli się powtarza, sprawdź chłodzenie, kable zasilania i gniazdo, potem skontaktuj się z dostawcą.",
		}},
	{ID: "unknown", Title: "Nie rozpoznano błędu urządzenia",
		Explanation: "devctl nie znalazł w tym logu błędu GPU, TPU ani innego akceleratora. Przyczyna leży raczej w programie, jego danych lub środowisku Pythona.",
		Fixes: []string{
			"Przeczytaj ostatni wyjątek w logu (cytowany jako dowód, jeśli go znaleziono).",
			"Jeśli spodziewałeś się błędu urządzenia, upewnij się, że log zawiera pełny traceback (2>&1).",
		}},
}

// NewCatalog returns a catalogue holding every log-explanation message in
// English and Polish. Each call builds a fresh catalogue, so a caller may
// Add its own messages (the doctor's checks) without affecting others.
func NewCatalog() *i18n.Catalog {
	return i18n.New().MustAdd(i18n.English, messagesEN...).MustAdd(i18n.Polish, messagesPL...)
}
