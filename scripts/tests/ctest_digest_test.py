#!/usr/bin/env python3
"""scripts/ctest_digest.py on a made-up ctest log: a failed fuzz run whose output holds a libhdf5 report isolated
earlier and then the report of the input that failed it. The digest (what CI's kept tail shows) must name the failed
test, the last report's first frames and the last worker's answer, and leave the passed tests out, the one passed on
its required output (ctest's "Test Pass Reason:", no "Test Passed.") included: CI's digest once named such a test
(fuzz-report-origin) as failed beside the one that was.

usage: ctest_digest_test.py SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

LOG = """1/4 Testing: cli:fine
Output:
----------------------------------------------------------
all good
<end of output>
Test Passed.
2/4 Testing: fuzz:fuzz_flashinfer_import
Output:
----------------------------------------------------------
INFO: Seed: 1
==100==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000011
    #0 0x55aa in strdup (/b/fuzz_flashinfer_import+0x2df000)
    #1 0x7faa in H5MM_xstrdup (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1111)
SUMMARY: AddressSanitizer: heap-buffer-overflow (/b/fuzz_flashinfer_import+0x2df000)
podcheck-fuzz: worker 100 answers 'h' for its sanitizer report (800 bytes read back from its report file); deciding frame (libhdf5 or its filters): #1 0x7faa
#500	NEW    cov: 2526 ft: 7603 corp: 86/2922Kb
==200==ERROR: AddressSanitizer: memcpy-param-overlap: memory ranges [0x621000048908,0x800062100004890f) and [0x621000037440, 0x8000621000037447) overlap
    #0 0x55bb in __interceptor_memcpy (/b/fuzz_flashinfer_import+0x2df885)
    #1 0x7fbb in H5HG_read (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x167b8d)
    #2 0x7fbc in H5T__conv_vlen (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x2beeff)
    #3 0x7fbd in H5T_convert (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x2b0000)
    #4 0x7fbe in H5A__read (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x63b19)
    #5 0x7fbf in H5Aread (/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x60000)
SUMMARY: AddressSanitizer: memcpy-param-overlap (/b/fuzz_flashinfer_import+0x2df885)
podcheck-fuzz: worker 200 answers 'p' for its sanitizer report (5052 bytes read back from its report file); deciding frame (other: another library, no module, or no function of the executable): #1 0x7fbb
podcheck-fuzz: the worker crashed in podcheck's code (report above) on an input the in-process read got through; failing the run on it
==50== ERROR: libFuzzer: deadly signal
ctest_fuzz: FAIL: the fuzzer exited with status 77
stat::peak_rss_mb:              96
<end of output>
Test time =  10 sec
Test Failed.
3/4 Testing: traces:ok
Output:
----------------------------------------------------------
fine too
<end of output>
Test Passed.
4/4 Testing: fuzz-report-origin:fuzz_trace_reader
Output:
----------------------------------------------------------
report_origin self-test: 4 of 4 made-up reports placed right, 0 of 4 addresses misplaced
<end of output>
Test time =   0.23 sec
----------------------------------------------------------
Test Pass Reason:
Required regular expression found. Regex=[4 of 4 made-up reports placed right, 0 of 4 addresses misplaced]
"""


def main(src):
    with tempfile.TemporaryDirectory() as build:
        os.makedirs(os.path.join(build, "Testing", "Temporary"))
        with open(os.path.join(build, "Testing", "Temporary", "LastTest.log"), "w") as f:
            f.write(LOG)
        out = subprocess.run([sys.executable, os.path.join(src, "scripts", "ctest_digest.py"), build],
                             capture_output=True, text=True, check=True).stdout
    print(out)
    wanted = ["ctest_digest: FAILED fuzz:fuzz_flashinfer_import", "#1 0x7fbb in H5HG_read", "#3 0x7fbd in H5T_convert",
              "worker 200 answers 'p'", "ctest_fuzz: FAIL: the fuzzer exited with status 77"]
    unwanted = ["cli:fine", "traces:ok", "fuzz-report-origin", "#4 0x7fbe", "#1 0x7faa in H5MM_xstrdup"]
    bad = [w for w in wanted if w not in out] + [u for u in unwanted if u in out]
    if bad:
        print(f"ctest_digest_test: FAIL: missing or unwanted in the digest: {bad}")
        return 1
    print("ctest_digest_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
