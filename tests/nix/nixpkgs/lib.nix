# Stand-in for nixpkgs' `lib`, written from builtins for Nix 2.8 (current
# nixpkgs needs Nix >= 2.18, see docs/nix.md).  It implements only the
# functions spillway's flake.nix and nix/ use, with nixpkgs' semantics.
# Test-only: nothing shipped imports this file.
let
  inherit (builtins) attrNames concatStringsSep filter foldl' genList head length listToAttrs
    match replaceStrings split stringLength substring tail;

  # nixpkgs' lib re-exports these builtins under the same names.
  fromBuiltins = {
    inherit (builtins) attrNames attrValues concatLists concatStringsSep elem elemAt filter foldl'
      fromJSON functionArgs genList getAttr hasAttr head intersectAttrs isAttrs isBool isFunction
      isInt isList isPath isString length listToAttrs mapAttrs match pathExists readFile
      removeAttrs replaceStrings split stringLength substring tail toJSON;
  };

  lib = fromBuiltins // rec {
    # attrsets
    nameValuePair = name: value: { inherit name value; };
    mapAttrs' = f: set: listToAttrs (map (name: f name set.${name}) (attrNames set));
    mapAttrsToList = f: set: map (name: f name set.${name}) (attrNames set);
    filterAttrs = pred: set:
      listToAttrs (map (name: nameValuePair name set.${name})
        (filter (name: pred name set.${name}) (attrNames set)));
    genAttrs = names: f: listToAttrs (map (name: nameValuePair name (f name)) names);
    optionalAttrs = cond: set: if cond then set else { };
    attrByPath = path: default: set:
      if path == [ ] then set
      else if set ? ${head path} then attrByPath (tail path) default set.${head path}
      else default;
    recursiveUpdate = a: b: a // b;

    # lists
    optional = cond: x: if cond then [ x ] else [ ];
    optionals = cond: xs: if cond then xs else [ ];
    concatMap = f: xs: builtins.concatLists (map f xs);
    unique = foldl' (acc: x: if builtins.elem x acc then acc else acc ++ [ x ]) [ ];

    # strings
    optionalString = cond: s: if cond then s else "";
    concatMapStringsSep = sep: f: xs: concatStringsSep sep (map f xs);
    concatStrings = concatStringsSep "";
    hasPrefix = prefix: s: substring 0 (stringLength prefix) s == prefix;
    hasSuffix = suffix: s:
      let ls = stringLength s; lx = stringLength suffix;
      in ls >= lx && substring (ls - lx) lx s == suffix;
    removePrefix = prefix: s:
      if hasPrefix prefix s then substring (stringLength prefix) (stringLength s) s else s;
    splitString = sep: s: filter builtins.isString (split (escapeRegex sep) s);
    escapeRegex = s: replaceStrings
      [ "\\" "." "*" "+" "?" "(" ")" "[" "]" "{" "}" "|" "^" "$" ]
      [ "\\\\" "\\." "\\*" "\\+" "\\?" "\\(" "\\)" "\\[" "\\]" "\\{" "\\}" "\\|" "\\^" "\\$" ] s;
    escapeShellArg = arg:
      let s = toString arg;
      in if match "[[:alnum:],._+:@%/=-]+" s != null then s
         else "'${replaceStrings [ "'" ] [ "'\\''" ] s}'";
    escapeShellArgs = args: concatStringsSep " " (map escapeShellArg args);
    makeBinPath = paths: concatStringsSep ":" (map (p: "${p}/bin") paths);
    makeSearchPath = sub: paths: concatStringsSep ":" (map (p: "${p}/${sub}") paths);
    toUpper = replaceStrings
      (genList (i: substring i 1 "abcdefghijklmnopqrstuvwxyz") 26)
      (genList (i: substring i 1 "ABCDEFGHIJKLMNOPQRSTUVWXYZ") 26);

    versions = {
      splitVersion = builtins.splitVersion;
      major = v: builtins.elemAt (builtins.splitVersion (toString v)) 0;
      minor = v: builtins.elemAt (builtins.splitVersion (toString v)) 1;
      majorMinor = v:
        let parts = builtins.splitVersion (toString v);
        in concatStringsSep "." (genList (builtins.elemAt parts) 2);
    };

    # misc
    assertMsg = pred: msg: pred || builtins.throw msg;
    getExe = drv: "${drv}/bin/${drv.meta.mainProgram or (drv.pname or drv.name)}";
    getExe' = drv: name: "${drv}/bin/${name}";
    getBin = drv: drv;
    getLib = drv: drv.lib or drv;
    id = x: x;
    const = x: _: x;
    fix = f: let x = f x; in x;
    extends = overlay: f: final: let prev = f final; in prev // overlay final prev;

    # scopes, as in lib/customisation.nix (callPackageWith, makeScope)
    callPackageWith = autoArgs: fn: args:
      let
        f = if builtins.isFunction fn then fn else import fn;
        wanted = builtins.functionArgs f;
      in f (builtins.intersectAttrs wanted autoArgs // args);
    makeScope = newScope: f:
      let
        self = f self // {
          newScope = scope: newScope (self // scope);
          callPackage = self.newScope { };
          overrideScope = g: makeScope newScope (extends g f);
          packages = f;
        };
      in self;

    # the parts of lib.licenses / lib.platforms that meta blocks name
    licenses = { mit = { shortName = "mit"; }; unfreeRedistributable = { shortName = "unfree-redistributable"; }; };
    platforms = { linux = [ "x86_64-linux" "aarch64-linux" ]; };

    trivial.release = "stand-in";
    version = "stand-in";
  };
in
lib
