//! One source file per default language, before and after the same kinds of change: a
//! body change (`alpha`), a signature change (`beta`), a removed function (`gone`), an
//! added one (`fresh`), a moved one (`helper`) and a renamed one (`old_name`).

pub struct Case {
    pub path: &'static str,
    pub old: &'static str,
    pub new: &'static str,
}

pub const CASES: &[Case] = &[
    Case {
        path: "src/counter.rs",
        old: "struct Counter {\n    n: u32,\n}\n\nimpl Counter {\n    fn alpha(&self) -> u32 {\n        self.n + 1\n    }\n\n    fn beta(&self, by: u32) -> u32 {\n        self.n * by\n    }\n\n    fn gone(&self) {\n        println!(\"bye\");\n    }\n}\n\nfn helper(a: u32) -> u32 {\n    let doubled = a * 2;\n    doubled + 1\n}\n\nfn old_name(x: u32) -> u32 {\n    let y = x + 40;\n    y * 3\n}\n",
        new: "fn helper(a: u32) -> u32 {\n    let doubled = a * 2;\n    doubled + 1\n}\n\nstruct Counter {\n    n: u32,\n}\n\nimpl Counter {\n    fn fresh(&self) -> bool {\n        self.n == 0\n    }\n\n    fn alpha(&self) -> u32 {\n        self.n + 2\n    }\n\n    fn beta(&self, by: u64) -> u64 {\n        self.n * by\n    }\n}\n\nfn new_name(x: u32) -> u32 {\n    let y = x + 40;\n    y * 3\n}\n",
    },
    Case {
        path: "app/counter.py",
        old: "class Counter:\n    def __init__(self, n):\n        self.n = n\n\n    def alpha(self):\n        return self.n + 1\n\n    @property\n    def beta(self, by):\n        return self.n * by\n\n    def gone(self):\n        print(\"bye\")\n\n\ndef helper(a):\n    doubled = a * 2\n    return doubled + 1\n\n\ndef old_name(x):\n    y = x + 40\n    return y * 3\n",
        new: "def helper(a):\n    doubled = a * 2\n    return doubled + 1\n\n\nclass Counter:\n    def __init__(self, n):\n        self.n = n\n\n    def fresh(self):\n        return self.n == 0\n\n    def alpha(self):\n        return self.n + 2\n\n    @staticmethod\n    def beta(self, by, extra=0):\n        return self.n * by\n\n\ndef new_name(x):\n    y = x + 40\n    return y * 3\n",
    },
    Case {
        path: "web/counter.js",
        old: "class Counter {\n  constructor(n) {\n    this.n = n;\n  }\n\n  alpha() {\n    return this.n + 1;\n  }\n\n  beta(by) {\n    return this.n * by;\n  }\n\n  gone() {\n    console.log(\"bye\");\n  }\n}\n\nfunction helper(a) {\n  const doubled = a * 2;\n  return doubled + 1;\n}\n\nconst old_name = (x) => {\n  const y = x + 40;\n  return y * 3;\n};\n",
        new: "function helper(a) {\n  const doubled = a * 2;\n  return doubled + 1;\n}\n\nclass Counter {\n  constructor(n) {\n    this.n = n;\n  }\n\n  fresh() {\n    return this.n === 0;\n  }\n\n  alpha() {\n    return this.n + 2;\n  }\n\n  beta(by, extra) {\n    return this.n * by;\n  }\n}\n\nconst new_name = (x) => {\n  const y = x + 40;\n  return y * 3;\n};\n",
    },
    Case {
        path: "web/counter.ts",
        old: "interface Shape {\n  n: number;\n}\n\nclass Counter implements Shape {\n  n = 0;\n\n  alpha(): number {\n    return this.n + 1;\n  }\n\n  beta(by: number): number {\n    return this.n * by;\n  }\n\n  gone(): void {\n    console.log(\"bye\");\n  }\n}\n\nfunction helper(a: number): number {\n  const doubled = a * 2;\n  return doubled + 1;\n}\n\nfunction old_name(x: number): number {\n  const y = x + 40;\n  return y * 3;\n}\n",
        new: "function helper(a: number): number {\n  const doubled = a * 2;\n  return doubled + 1;\n}\n\ninterface Shape {\n  n: number;\n}\n\nclass Counter implements Shape {\n  n = 0;\n\n  fresh(): boolean {\n    return this.n === 0;\n  }\n\n  alpha(): number {\n    return this.n + 2;\n  }\n\n  beta(by: bigint): bigint {\n    return this.n * by;\n  }\n}\n\nfunction new_name(x: number): number {\n  const y = x + 40;\n  return y * 3;\n}\n",
    },
    Case {
        path: "cmd/counter.go",
        old: "package main\n\nimport \"fmt\"\n\ntype Counter struct {\n\tn int\n}\n\nfunc (c *Counter) Alpha() int {\n\treturn c.n + 1\n}\n\nfunc (c *Counter) Beta(by int) int {\n\treturn c.n * by\n}\n\nfunc (c *Counter) Gone() {\n\tfmt.Println(\"bye\")\n}\n\nfunc helper(a int) int {\n\tdoubled := a * 2\n\treturn doubled + 1\n}\n\nfunc oldName(x int) int {\n\ty := x + 40\n\treturn y * 3\n}\n",
        new: "package main\n\nfunc helper(a int) int {\n\tdoubled := a * 2\n\treturn doubled + 1\n}\n\ntype Counter struct {\n\tn int\n}\n\nfunc (c *Counter) Fresh() bool {\n\treturn c.n == 0\n}\n\nfunc (c *Counter) Alpha() int {\n\treturn c.n + 2\n}\n\nfunc (c *Counter) Beta(by int64) int64 {\n\treturn c.n * by\n}\n\nfunc newName(x int) int {\n\ty := x + 40\n\treturn y * 3\n}\n",
    },
    Case {
        path: "java/Counter.java",
        old: "class Counter {\n    private int n;\n\n    int alpha() {\n        return n + 1;\n    }\n\n    int beta(int by) {\n        return n * by;\n    }\n\n    void gone() {\n        System.out.println(\"bye\");\n    }\n\n    void run(int a) {\n        System.out.println(a);\n    }\n\n    void run(String a) {\n        System.out.println(a);\n    }\n\n    int helper(int a) {\n        int doubled = a * 2;\n        return doubled + 1;\n    }\n\n    int oldName(int x) {\n        int y = x + 40;\n        return y * 3;\n    }\n}\n",
        new: "class Counter {\n    void run(String a) {\n        System.out.println(a);\n    }\n\n    int helper(int a) {\n        int doubled = a * 2;\n        return doubled + 1;\n    }\n\n    private int n;\n\n    boolean fresh() {\n        return n == 0;\n    }\n\n    int alpha() {\n        return n + 2;\n    }\n\n    long beta(long by) {\n        return n * by;\n    }\n\n    void run(int a) {\n        System.out.println(a);\n    }\n\n    int newName(int x) {\n        int y = x + 40;\n        return y * 3;\n    }\n}\n",
    },
];
