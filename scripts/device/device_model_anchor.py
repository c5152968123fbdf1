# Anchor for scripts/device/device_model.sh on the GPU machine: Hugging Face transformers' eager generate
# on the same config (random weights), greedy, a 112-token prompt, 128 new tokens, per dtype.
# Usage there: python3 scripts/device/device_model_anchor.py build/device-model/smollm2
import sys
import time

import torch
import transformers

cfg = transformers.AutoConfig.from_pretrained(sys.argv[1])
for dt in (torch.float16, torch.bfloat16, torch.float32):
    torch.manual_seed(0)
    m = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dt).cuda().eval()
    ids = torch.randint(0, cfg.vocab_size, (1, 112), device="cuda")
    for run in range(3):
        with torch.inference_mode():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            m(ids)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            out = m.generate(ids, max_new_tokens=128, min_new_tokens=128, do_sample=False)
            torch.cuda.synchronize()
            t2 = time.perf_counter()
        n = out.shape[1] - 112
        decode = (t2 - t1) - (t1 - t0)  # generate's own prefill taken as one more forward
        print(f"run {run+1} transformers {str(dt)[6:]}: prefill {112/(t1-t0):7.1f} tok/s  decode {(n-1)/decode:6.1f} tok/s")
